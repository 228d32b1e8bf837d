// Small device and launch helpers shared by the cuda backend's kernels: grid sizing, alignment
// tests and a deterministic block-wide sum.
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace pcnn::cuda {

inline int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

// Blocks for a grid-stride loop over n items: enough to fill the GPU a few times, no more.
inline int grid_for(size_t n, int threads, int sm_count) {
  const long long want = (static_cast<long long>(n) + threads - 1) / threads;
  const long long cap = static_cast<long long>(sm_count) * 8;
  return int(want < 1 ? 1 : (want > cap ? cap : want));
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Staging global -> shared without a register round trip (cp.async): a thread can have all of
// its copies in flight at once, so staging costs about one memory latency, not one per element.
__device__ __forceinline__ void copy_async(float* dst_shared, const float* src_global) {
  __pipeline_memcpy_async(dst_shared, src_global, sizeof(float));
}
// Waits for this thread's copies; a __syncthreads() must follow before others read them.
__device__ __forceinline__ void copy_async_wait() {
  __pipeline_commit();
  __pipeline_wait_prior(0);
}

// A whole block's strided walk over a (planes, rows, cols) box: thread t visits items t,
// t + blockDim.x, ... but carries the coordinates from one to the next instead of dividing a
// flat index (three integer divisions by run-time sizes cost more instructions than the copy
// they address: H200, ncu, LeNet-5's conv1 backward at batch 1024 issued 6 instructions per
// multiply-add, most of them in staging). `index` is the flat item number.
struct BoxWalk {
  int plane, row, col, index;
  int rows, cols, dplane, drow, dcol;
  __device__ __forceinline__ BoxWalk(int rows_, int cols_) : rows(rows_), cols(cols_) {
    const int t = threadIdx.x, step = blockDim.x;
    index = t;
    col = t % cols;
    row = (t / cols) % rows;
    plane = t / (cols * rows);
    dcol = step % cols;
    drow = (step / cols) % rows;
    dplane = step / (cols * rows);
  }
  __device__ __forceinline__ void next() {
    index += blockDim.x;
    col += dcol;
    int carry = col >= cols;
    if (carry) col -= cols;
    row += drow + carry;
    carry = row >= rows;
    if (carry) row -= rows;
    plane += dplane + carry;
  }
};

// The last-block step of a reduction over `blocks` blocks: counts this block as done and returns
// true in every thread of the last one, which then sees what every block wrote before counting.
// Every thread must call it (it holds a barrier). The last block resets the counter for the next
// launch (graph replays). The last block, whose tail (the sum of the blocks' partials) is all
// that is left of the grid once every block has counted, lets the next kernel of the stream be
// dispatched meanwhile (griddepcontrol.launch_dependents; the others signal by exiting): that
// kernel's blocks still wait for this grid's end and its writes (wait_for_previous_kernel in
// launch.cuh), so only their dispatch overlaps the tail, not their work. Compile with
// PCNN_NO_TAIL_SIGNAL for the plain order (a same-run comparison).
__device__ inline bool last_block_done(unsigned* counter, unsigned blocks) {
  __shared__ bool is_last;
  __threadfence();  // this thread's partials are visible before the count says the block is done
  __syncthreads();
  if (threadIdx.x == 0) {
    is_last = atomicAdd(counter, 1u) == blocks - 1;
    if (is_last) *counter = 0u;
  }
  __syncthreads();
  if (is_last) {
    __threadfence();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(PCNN_NO_TAIL_SIGNAL)
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  }
  return is_last;
}

// Sum over the block, the same order every run; every thread must call it. `red` holds 32 T.
template <class T>
__device__ inline T block_sum(T v, T* red) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // red may still be read by a previous call
  if (lane == 0) red[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  T total = T(0);
  if (threadIdx.x == 0)
    for (int i = 0; i < warps; ++i) total += red[i];
  return total;  // valid in thread 0 only
}

// The sum of rows[i * pitch] for i < count (the chunk or split sums a reduction's last step
// adds up), read through L2 (__ldcg: another block wrote them) in a fixed order, so a run's bits
// repeat: row i goes to running sum i mod U, and the U sums are added pairwise. All U loads of a
// round are in flight together; the reductions used to load one at a time, or eight (step lab,
// H100, session 26, 8 -> 32: +0.2 to +1.4 % a step on LeNet-5 and Simard 2003, +3.6 % on
// fast3x3 at batch 128).
template <int U>
__device__ __forceinline__ float sum_rows(const float* rows, int count, size_t pitch) {
  float v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) v[u] = 0.f;
  for (int i = 0; i < count; i += U) {
    // One address stepped along, not U of them: ptxas kept every address of the round live
    // (168 registers and a stack frame for U = 32, against 48).
    const float* row = rows + size_t(i) * pitch;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (i + u < count) v[u] += __ldcg(row);
      row += pitch;
    }
  }
#pragma unroll
  for (int step = 1; step < U; step *= 2)
#pragma unroll
    for (int u = 0; u < U; u += 2 * step) v[u] += v[u + step];
  return v[0];
}

// sum_rows with the loads a round in flight that PCNN_SUM_LOADS asks for (CudaContext
// sum_loads: 8 or 32), a measuring aid for the same binary.
__device__ __forceinline__ float sum_rows_as(int loads, const float* rows, int count,
                                             size_t pitch) {
  return loads == 8 ? sum_rows<8>(rows, count, pitch) : sum_rows<32>(rows, count, pitch);
}

}  // namespace pcnn::cuda
