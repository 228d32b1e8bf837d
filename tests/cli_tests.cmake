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
# pcnn eval's warning when a model file says it was trained on other data: the model files are
# stamped with a data folder's provenance through the library API (tests/tools/).
add_executable(pcnn_stamp_provenance tools/stamp_provenance.cpp)
target_link_libraries(pcnn_stamp_provenance PRIVATE pcnn)
add_test(NAME cli_provenance COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_provenance.sh
         $<TARGET_FILE:pcnn_cli> $<TARGET_FILE:pcnn_stamp_provenance>)
# pcnn show: built-in names, their files, a saved model file, the docs' example, bad files.
add_test(NAME cli_show COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_show.sh $<TARGET_FILE:pcnn_cli>
         ${PROJECT_SOURCE_DIR})
# pcnn predict: classes agreeing with pcnn eval, probabilities in order, bad input in one line.
add_test(NAME cli_predict COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_predict.sh $<TARGET_FILE:pcnn_cli>)
# Data beyond MNIST: CIFAR-10/100 and image folders written by tests/tools/make_data_sets, the
# format detection, --data-format, --val-split, --limit, predict on image files, hostile files.
if(pcnn_test_images)
  add_executable(pcnn_make_data_sets tools/make_data_sets.cpp)
  target_link_libraries(pcnn_make_data_sets PRIVATE pcnn_test_images)
  add_test(NAME cli_data_formats COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_data_formats.sh
           $<TARGET_FILE:pcnn_cli> $<TARGET_FILE:pcnn_make_data_sets>)
endif()
