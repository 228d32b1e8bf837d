// Why a compiled-in backend cannot run here, said once and plainly: without the backend's name
// repeated in front ("cudnn: cudnn: ..."), and, for the GPU backends, which of the three usual
// causes it is: no NVIDIA driver, a driver too old for this build's CUDA, or no GPU.
#pragma once

#include <string>

namespace pcnn {

// backend: its registry name; what: the message of the Unavailable it threw.
std::string unavailable_reason(const std::string& backend, const std::string& what);

}  // namespace pcnn
