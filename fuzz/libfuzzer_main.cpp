// The libFuzzer entry point of one fuzz program; PCNN_FUZZ_TARGET (set by fuzz/CMakeLists.txt)
// names the target function. Exceptions other than pcnn::Error are left to escape: libFuzzer
// reports the abort as a crash and saves the input.
#include "fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pcnn::fuzz::PCNN_FUZZ_TARGET(data, size);
  return 0;
}
