// The throwing half of cudnn_check.hpp: builds the one-line messages.
#include "backends/cudnn/cudnn_check.hpp"

#include <string>

namespace pcnn::vendor {

namespace {
std::string where(const char* call, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: ";
}
}  // namespace

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw Error(where(call, file, line) + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
              ")");
}

void throw_cudnn_error(cudnnStatus_t st, const char* call, const char* file, int line) {
  // cuDNN 9 keeps a more specific message for the last failure of this thread.
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::string msg = where(call, file, line) + cudnnGetErrorString(st);
  if (detail[0]) {
    std::string d(detail);
    for (char& ch : d)
      if (ch == '\n' || ch == '\r') ch = ' ';  // errors are one line
    msg += " (" + d + ")";
  }
  throw Error(msg);
}

void throw_cublas_error(cublasStatus_t st, const char* call, const char* file, int line) {
  throw Error(where(call, file, line) + cublasGetStatusString(st));
}

}  // namespace pcnn::vendor
