// The throwing half of cudnn_check.hpp: one line naming the place, the call and the library's
// words, in the form of the cuda base's CUDA errors.
#include "backends/cudnn/cudnn_check.hpp"

#include <string>

namespace pcnn::vendor {

namespace {
std::string where(const char* library, const char* call, const char* file, int line) {
  return std::string(library) + " error at " + file + ":" + std::to_string(line) + ": " + call +
         ": ";
}
}  // namespace

void throw_cudnn_error(cudnnStatus_t st, const char* call, const char* file, int line) {
  // cuDNN 9 keeps a more specific message for the last failure of this thread.
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::string msg = where("cuDNN", call, file, line) + cudnnGetErrorString(st);
  if (detail[0]) {
    std::string d(detail);
    for (char& ch : d)
      if (ch == '\n' || ch == '\r') ch = ' ';  // errors are one line
    msg += " (" + d + ")";
  }
  throw Error(msg);
}

void throw_cublas_error(cublasStatus_t st, const char* call, const char* file, int line) {
  throw Error(where("cuBLAS", call, file, line) + cublasGetStatusString(st));
}

}  // namespace pcnn::vendor
