// The values are compile definitions of this file only, so a changed flag recompiles only it.
#include "bench/build_info.hpp"

namespace pcnn::bench {

BuildInfo build_info() { return {PCNN_BUILD_COMPILER, PCNN_BUILD_FLAGS, PCNN_BUILD_TYPE}; }

}  // namespace pcnn::bench
