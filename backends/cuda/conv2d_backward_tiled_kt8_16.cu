// Instantiations of the fused convolution backward kernels for filter tiles 8 and 16 (one of
// the files that compile them side by side: conv2d_backward_tiled.cuh).
#include "backends/cuda/conv2d_backward_tiled_kernels.cuh"

namespace pcnn::cuda::tiled {

template void launch_fused_kt<8>(CudaContext&, const FusedPlan&, const FusedArgs&);
template void launch_fused_kt<16>(CudaContext&, const FusedPlan&, const FusedArgs&);

}  // namespace pcnn::cuda::tiled
