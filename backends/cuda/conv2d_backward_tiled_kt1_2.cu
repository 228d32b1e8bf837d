// Instantiations of the fused convolution backward kernels for filter tiles 1 and 2 (one of
// the files that compile them side by side: conv2d_backward_tiled.cuh).
#include "backends/cuda/conv2d_backward_tiled_kernels.cuh"

namespace pcnn::cuda::tiled {

template void launch_fused_kt<1>(CudaContext&, const FusedPlan&, const FusedArgs&);
template void launch_fused_kt<2>(CudaContext&, const FusedPlan&, const FusedArgs&);

}  // namespace pcnn::cuda::tiled
