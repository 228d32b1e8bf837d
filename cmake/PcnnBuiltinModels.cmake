# The built-in models are JSON files (models/builtin/NAME.json), in the format a user writes
# (docs/model-format.md). pcnn_embed_builtin_models(TARGET) compiles their text into TARGET
# through a generated source, so `--model lenet5` and `--model models/builtin/lenet5.json` take
# one path from a description to a network.

# In the order `pcnn` lists them (the first is the default of `pcnn train`).
set(PCNN_BUILTIN_MODELS lenet5 simard2003 mlp fast3x3)

function(pcnn_embed_builtin_models target)
  set(rows "")
  # Text between R"pcnn_json( and )pcnn_json" is taken verbatim by the compiler.
  set(delimiter "pcnn_json")
  foreach(name IN LISTS PCNN_BUILTIN_MODELS)
    set(file ${PROJECT_SOURCE_DIR}/models/builtin/${name}.json)
    if(NOT EXISTS ${file})
      message(FATAL_ERROR "built-in model '${name}' has no file ${file}")
    endif()
    file(READ ${file} text)
    string(FIND "${text}" ")${delimiter}\"" clash)
    if(NOT clash EQUAL -1)
      message(FATAL_ERROR "${file} holds ')${delimiter}\"', which would end its embedded text")
    endif()
    string(APPEND rows "    {\"${name}\", R\"${delimiter}(${text})${delimiter}\"},\n")
    # Editing a file configures again, so the build never embeds an old text.
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  endforeach()
  set(PCNN_BUILTIN_MODEL_ROWS "${rows}")
  set(generated ${PROJECT_BINARY_DIR}/generated/builtin_models.cpp)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/builtin_models.cpp.in ${generated} @ONLY)
  target_sources(${target} PRIVATE ${generated})
endfunction()
