# The command-line and README tests: shell scripts run against the pcnn binary. Included from
# tests/CMakeLists.txt; a script exits 77 (skipped) when the default data set is not installed.
foreach(script cli_conventions cli_progress cli_log)
  add_test(NAME ${script} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/${script}.sh $<TARGET_FILE:pcnn_cli>)
  set_tests_properties(${script} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
# Every ./build/pcnn command shown in README.md, run with small sizes; the preset list there
# against CMakePresets.json.
add_test(NAME readme_commands COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/readme_commands.sh
         $<TARGET_FILE:pcnn_cli> ${PROJECT_SOURCE_DIR}/README.md)
add_test(NAME readme_presets COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/readme_presets.sh
         ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR} ${CMAKE_COMMAND})
set_tests_properties(readme_commands PROPERTIES SKIP_RETURN_CODE 77)
