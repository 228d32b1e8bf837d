// The Split variant's data-gradient kernel, instantiated as the fused one is
// (conv2d_backward_tiled_kernels.cuh, launch_fused_kt).
#include "backends/cuda/conv2d_backward_tiled_kernels.cuh"

namespace pcnn::cuda::tiled {

namespace {

template <bool kUnit, int RS>
void launch_dx_as(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  constexpr auto kernel = conv2d_backward_kernel_dx<kUnit, RS>;
  if (f.dx_smem_floats > kMaxSmemFloats) allow_opt_in_smem<kernel>(ctx);
  launch(ctx, "conv2d_backward_kernel_dx", kernel, f.dx_blocks, f.dx_threads,
         size_t(f.dx_smem_floats) * sizeof(float), a);
}

}  // namespace

void launch_dx(CudaContext& ctx, const FusedPlan& f, const FusedArgs& a) {
  if (f.lanes_warps)
    launch_dx_lanes(ctx, f, a);
  else if (f.rs == 5)
    launch_dx_as<true, 5>(ctx, f, a);
  else if (f.rs == 3)
    launch_dx_as<true, 3>(ctx, f, a);
  else if (a.s.stride == 1)
    launch_dx_as<true, 0>(ctx, f, a);
  else
    launch_dx_as<false, 0>(ctx, f, a);
}

}  // namespace pcnn::cuda::tiled
