// Activation tensors (x, y, dy, dx) as the convolution kernels see them: fp32, or 16-bit storage
// (core/precision.hpp) widened as it is loaded and rounded as it is stored, the sums in between
// fp32 either way. The format is a run-time field, the same for a whole launch, so its branch is
// uniform across every warp and costs no divergence; one compiled kernel serves all three
// precisions (as template arguments they would double the instantiations of the backward
// kernels, whose compilation is already the longest part of the build). A 16-bit launch computes
// the bits of the composed default (widen into fp32, the fp32 kernel, round), without its
// conversion launches and staging copies.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/common.cuh"
#include "core/precision.hpp"

namespace pcnn::cuda {

struct ActIn {
  const void* p = nullptr;
  Precision prec = Precision::F32;

  ActIn() = default;
  __host__ __device__ ActIn(const float* f) : p(f) {}  // NOLINT: an fp32 tensor is the usual case
  __host__ __device__ ActIn(Precision pr, const uint16_t* h) : p(h), prec(pr) {}

  __host__ __device__ explicit operator bool() const { return p != nullptr; }
  __device__ __forceinline__ float load(size_t i) const {
    if (prec == Precision::F32) return static_cast<const float*>(p)[i];
    return widen_from_storage(prec, static_cast<const uint16_t*>(p)[i]);
  }
  // Element i into shared memory: fp32 by cp.async (copy_async_wait() before it is read), 16 bits
  // through a register, widened.
  __device__ __forceinline__ void stage(float* dst_shared, size_t i) const {
    if (prec == Precision::F32)
      copy_async(dst_shared, static_cast<const float*>(p) + i);
    else
      *dst_shared = widen_from_storage(prec, static_cast<const uint16_t*>(p)[i]);
  }
};

struct ActOut {
  void* p = nullptr;
  Precision prec = Precision::F32;

  ActOut() = default;
  __host__ __device__ ActOut(float* f) : p(f) {}  // NOLINT: as ActIn
  __host__ __device__ ActOut(Precision pr, uint16_t* h) : p(h), prec(pr) {}

  __host__ __device__ explicit operator bool() const { return p != nullptr; }
  __device__ __forceinline__ void store(size_t i, float v) const {
    if (prec == Precision::F32)
      static_cast<float*>(p)[i] = v;
    else
      static_cast<uint16_t*>(p)[i] = round_to_storage(prec, v);
  }
};

}  // namespace pcnn::cuda
