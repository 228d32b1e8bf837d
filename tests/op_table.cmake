# pcnn_op_table: the op-case table and the comparison harness (tests/compare, op_table, op_run),
# free of any test framework, so that the test binary and the CUDA kernel lab share them.
# Included by tests/ and bench/kernels/; whichever comes first defines it.
if(NOT TARGET pcnn_op_table)
  add_library(pcnn_op_table STATIC ${CMAKE_CURRENT_LIST_DIR}/compare.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/op_table.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/op_run.cpp)
  target_link_libraries(pcnn_op_table PUBLIC pcnn_contract)
endif()
