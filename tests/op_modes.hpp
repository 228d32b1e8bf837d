// `pcnn_tests --mode test|grad|perf ...`: the op table over every usable backend in one process,
// printed as op x backend tables (tests/op_modes.cpp says what each mode does).
#pragma once

namespace pcnn::test {

bool wants_op_mode(int argc, char** argv);  // --mode on the command line
int run_op_mode(int argc, char** argv);     // exit code: 0 pass, 1 failures, 2 error, 77 skipped

}  // namespace pcnn::test
