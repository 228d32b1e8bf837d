# Backends are declared in CMakeLists.txt, one line each, in order of preference (fastest first):
#
#   pcnn_backend(NAME [OPTION VAR [DEFAULT ON|OFF] [DOC "text"]] [NEEDS VAR...])
#
# NAME is the folder backends/NAME: its CMakeLists.txt defines the library pcnn_backend_NAME,
# its NAME_entry.cpp defines `BackendTraits NAME_backend_traits()`, and the library defines
# `create_NAME_backend(const BackendOptions&)`. OPTION is the cache option that builds it (none:
# always built); NEEDS are variables that must be true too (set by the find steps that run
# between the declarations and pcnn_add_backends(), e.g. PCNN_KOKKOS_FOUND).
function(pcnn_backend NAME)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OPTION;DEFAULT;DOC" "NEEDS")
  if(arg_OPTION)
    if(NOT arg_DOC)
      set(arg_DOC "Build the ${NAME} backend")
      if(arg_NEEDS)
        string(REPLACE ";" " and " needs "${arg_NEEDS}")
        string(APPEND arg_DOC " (needs ${needs})")
      endif()
    endif()
    option(${arg_OPTION} "${arg_DOC}" ${arg_DEFAULT})
  endif()
  set_property(GLOBAL APPEND PROPERTY PCNN_KNOWN_BACKENDS ${NAME})
  set_property(GLOBAL PROPERTY PCNN_BACKEND_${NAME}_OPTION "${arg_OPTION}")
  set_property(GLOBAL PROPERTY PCNN_BACKEND_${NAME}_NEEDS "${arg_NEEDS}")
endfunction()

# Builds every declared backend whose option is ON and whose NEEDS hold (add_subdirectory, linked
# into the interface library pcnn_backends), and generates the registry's list of every declared
# backend. Sets, in the caller:
#   PCNN_KNOWN_BACKENDS     every declared backend, in order of preference
#   PCNN_COMPILED_BACKENDS  those built, in the same order
#   PCNN_REGISTRY_SOURCES   the generated list and every backend's NAME_entry.cpp (traits are
#                           known whether the backend is built or not), for the registry's library
function(pcnn_add_backends)
  get_property(known GLOBAL PROPERTY PCNN_KNOWN_BACKENDS)
  set(compiled "")
  set(declarations "")
  set(rows "")
  set(list_cpp ${PROJECT_BINARY_DIR}/generated/backend_list.cpp)
  set(sources ${list_cpp})
  foreach(name IN LISTS known)
    get_property(option GLOBAL PROPERTY PCNN_BACKEND_${name}_OPTION)
    get_property(needs GLOBAL PROPERTY PCNN_BACKEND_${name}_NEEDS)
    set(why "")
    foreach(need IN ITEMS ${option} ${needs})  # the first one false says why
      if(NOT ${need})
        get_property(type CACHE ${need} PROPERTY TYPE)
        if(type STREQUAL "BOOL")  # an option
          set(why "reconfigure with -D${need}=ON")
        else()
          set(why "${need} is false: see the CMake configure output")
        endif()
        break()
      endif()
    endforeach()
    list(APPEND sources ${PROJECT_SOURCE_DIR}/backends/${name}/${name}_entry.cpp)
    string(APPEND declarations "BackendTraits ${name}_backend_traits();\n")
    set(factory nullptr)
    if(NOT why)
      add_subdirectory(${PROJECT_SOURCE_DIR}/backends/${name}
                       ${PROJECT_BINARY_DIR}/backends/${name})
      target_link_libraries(pcnn_backends INTERFACE pcnn_backend_${name})
      list(APPEND compiled ${name})
      string(APPEND declarations
             "std::unique_ptr<Backend> create_${name}_backend(const BackendOptions&);\n")
      set(factory create_${name}_backend)
    endif()
    string(APPEND rows "      {${name}_backend_traits(), \"${name}\", \"${option}\", \"${why}\", "
                       "${factory}},\n")
  endforeach()
  set(PCNN_BACKEND_DECLARATIONS "${declarations}")
  set(PCNN_BACKEND_ROWS "${rows}")
  configure_file(${PROJECT_SOURCE_DIR}/backends/backend_list.cpp.in ${list_cpp} @ONLY)
  set(PCNN_KNOWN_BACKENDS ${known} PARENT_SCOPE)
  set(PCNN_COMPILED_BACKENDS ${compiled} PARENT_SCOPE)
  set(PCNN_REGISTRY_SOURCES ${sources} PARENT_SCOPE)
endfunction()
