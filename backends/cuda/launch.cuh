// Kernel launches of the cuda backend as programmatic dependent launches (compute capability 9.0
// and up): the next kernel of the stream is set up while the current one runs, and its blocks
// start as soon as the current one's blocks have all exited, without the launch gap a plain
// stream order leaves. In a captured step graph that is 2-4 % of a LeNet-5 step (H200:
// notes/tuning-cuda.md). Every kernel launched through launch() must call
// wait_for_previous_kernel() before it touches memory: that wait is what keeps the stream's order.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_context.hpp"

namespace pcnn::cuda {

// The first statement of every kernel: waits until every earlier kernel of the stream has
// finished and its writes are visible (a no-op for a kernel launched in order). Each kernel
// waiting before it ends is what makes the order transitive: C waits on B, which could not end
// before A had. No kernel signals its dependants early (griddepcontrol.launch_dependents at its
// start): measured, that made LeNet-5's step 10 % slower at batch 1024, the next kernel's
// blocks holding multiprocessors while they waited. Only a reduction's last block signals, as
// it starts the tail that is all the grid has left (common.cuh, last_block_done).
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// kernel<<<grid, block, smem, ctx.stream()>>>(args...), as a dependent launch when the context
// allows it (CudaContext::dependent_launches), its blocks in clusters of `cluster` (consecutive
// blocks along x; 1: none), checked: a failure throws, naming `name`.
template <class... Params, class... Args>
void launch_clustered(const CudaContext& ctx, const char* name, int cluster,
                      void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                      Args&&... args) {
  cudaLaunchAttribute attrs[2]{};
  unsigned count = 0;
  if (ctx.dependent_launches()) {
    attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[count++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster > 1) {
    attrs[count].id = cudaLaunchAttributeClusterDimension;
    attrs[count].val.clusterDim.x = unsigned(cluster);
    attrs[count].val.clusterDim.y = 1;
    attrs[count++].val.clusterDim.z = 1;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = ctx.stream();
  cfg.attrs = attrs;
  cfg.numAttrs = count;
  const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
  if (err != cudaSuccess) {
    cudaGetLastError();  // a bad configuration is not sticky; the next check should not see it
    throw_cuda_error(err, ("launch of " + std::string(name)).c_str(), __FILE__, __LINE__);
  }
}
template <class... Params, class... Args>
void launch(const CudaContext& ctx, const char* name, void (*kernel)(Params...), dim3 grid,
            dim3 block, size_t smem, Args&&... args) {
  launch_clustered(ctx, name, 1, kernel, grid, block, smem, std::forward<Args>(args)...);
}

// The default shared memory a block may use without opting in, less room for the kernels'
// static shared memory (last_block_done's flag, block_sum's row): dynamic and static together
// must fit in 48 KB, and a plan of exactly 48 KB dynamic would not launch.
constexpr int kDefaultSmemBytes = 48 * 1024 - 256;

// What a block may opt in to beyond the default 48 KB of shared memory, less room for static
// shared memory: two such blocks still fit a multiprocessor of Hopper or Ampere (228 / 164 KB).
constexpr int kOptInSmemBytes = 99 * 1024 - 256;

// Lets `kernel` use up to kOptInSmemBytes of dynamic shared memory, once per device (a function
// attribute of the device's context, not a stream operation); its planner checked that the
// device has that much (CudaContext::smem_optin_floats).
template <auto kernel>
void allow_opt_in_smem(CudaContext& ctx) {
  static std::atomic<uint64_t> allowed{0};  // bit d: done on device d
  const uint64_t bit = ctx.device() < 64 ? uint64_t(1) << ctx.device() : 0;
  if (bit && (allowed.load() & bit)) return;
  PCNN_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kOptInSmemBytes));
  allowed.fetch_or(bit);
}

}  // namespace pcnn::cuda
