# pcnn_add_backend(NAME): builds backends/NAME (which defines the library pcnn_backend_NAME),
# hands it to the registry and records NAME in the global list PCNN_BACKENDS.
function(pcnn_add_backend NAME)
  add_subdirectory(${PROJECT_SOURCE_DIR}/backends/${NAME} ${PROJECT_BINARY_DIR}/backends/${NAME})
  target_link_libraries(pcnn_backends INTERFACE pcnn_backend_${NAME})
  set_property(GLOBAL APPEND PROPERTY PCNN_BACKENDS ${NAME})
endfunction()
