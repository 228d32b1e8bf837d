// The throwing half of cuda_check.hpp: one line naming the place, the call and CUDA's words.
#include "backends/cuda/cuda_check.hpp"

#include <sstream>

namespace pcnn::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << "CUDA error at " << file << ":" << line << ": " << call << ": "
     << cudaGetErrorString(err) << " (" << cudaGetErrorName(err) << ")";
  throw Error(os.str());
}

}  // namespace pcnn::cuda
