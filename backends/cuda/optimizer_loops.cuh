// The optimizers' per-element loops over a block's grid-stride share of the parameter arena,
// shared by the update kernels (optimizer.cu) and the end-of-step kernel that checks the
// gradients first (step_check.cu). Vec4 moves 16 bytes per access (the update is purely
// bandwidth-bound); its arrays must be 16-byte aligned. The rule per element is
// core/optimizer_math.hpp.
#pragma once

#include <cstddef>

#include "core/optimizer_math.hpp"

namespace pcnn::cuda {

// p, g, v (n): SGD with momentum on this thread's elements
template <bool Vec4>
__device__ inline void sgd_share(const SgdHyper& h, size_t n, float* p, const float* g,
                                 float* v) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t done = 0;  // elements the float4 body covers
  if (Vec4) {
    done = n / 4 * 4;
    float4* p4 = reinterpret_cast<float4*>(p);
    float4* v4 = reinterpret_cast<float4*>(v);
    const float4* g4 = reinterpret_cast<const float4*>(g);
    for (size_t i = first; i < n / 4; i += stride) {
      float4 pp = p4[i], vv = v4[i];
      const float4 gg = g4[i];
      sgd_step(h, pp.x, gg.x, vv.x);
      sgd_step(h, pp.y, gg.y, vv.y);
      sgd_step(h, pp.z, gg.z, vv.z);
      sgd_step(h, pp.w, gg.w, vv.w);
      p4[i] = pp;
      v4[i] = vv;
    }
  }
  for (size_t i = done + first; i < n; i += stride) sgd_step(h, p[i], g[i], v[i]);
}

// p, g, m, v (n): Adam on this thread's elements
template <bool Vec4>
__device__ inline void adam_share(const AdamHyper& h, size_t n, float* p, const float* g,
                                  float* m, float* v) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t done = 0;
  if (Vec4) {
    done = n / 4 * 4;
    float4* p4 = reinterpret_cast<float4*>(p);
    float4* m4 = reinterpret_cast<float4*>(m);
    float4* v4 = reinterpret_cast<float4*>(v);
    const float4* g4 = reinterpret_cast<const float4*>(g);
    for (size_t i = first; i < n / 4; i += stride) {
      float4 pp = p4[i], mm = m4[i], vv = v4[i];
      const float4 gg = g4[i];
      adam_step(h, pp.x, gg.x, mm.x, vv.x);
      adam_step(h, pp.y, gg.y, mm.y, vv.y);
      adam_step(h, pp.z, gg.z, mm.z, vv.z);
      adam_step(h, pp.w, gg.w, mm.w, vv.w);
      p4[i] = pp;
      m4[i] = mm;
      v4[i] = vv;
    }
  }
  for (size_t i = done + first; i < n; i += stride) adam_step(h, p[i], g[i], m[i], v[i]);
}

}  // namespace pcnn::cuda
