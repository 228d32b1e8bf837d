// The convolutions as implicit GEMMs on the FMA tile engine (gemm_run.cuh): the forward and
// backward fallbacks conv2d_forward.cu and conv2d_backward.cu take for shapes their own kernels
// cannot hold. A module of their own: a run whose convolutions never fall back loads none of it.
#include "backends/cuda/common.cuh"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/gemm_run.cuh"
#include "core/activation_math.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda {

namespace {

// Convolution backward as implicit GEMMs (conv2d_backward_gemm): operands gathered from the
// tensors where the product reads them, nothing unfolded in memory. dact is d(act_out) (N,K,P,Q).

// The im2col element both the forward and the weight gradient read: x(n,c,h,w) for output
// pixel `pixel` = (n,p,q) and tap `tap` = (c,r,s), h = p*stride - pad + r, w = q*stride - pad + s,
// zero outside the image. pq = P*Q, q_size = Q, rs = R*S.
__device__ __forceinline__ float im2col_at(const Conv2dShape& s, const float* x, int pq,
                                           int q_size, int rs, int pixel, int tap) {
  const int n = pixel / pq, e = pixel - n * pq, p = e / q_size, q = e - p * q_size;
  const int c = tap / rs, t = tap - c * rs, r = t / s.S, u = t - r * s.S;
  const int h = p * s.stride - s.pad + r, w = q * s.stride - s.pad + u;
  return (h >= 0 && h < s.H && w >= 0 && w < s.W) ? x[((size_t(n) * s.C + c) * s.H + h) * s.W + w]
                                                  : 0.f;
}

// act_out (N*P*Q pixels, K) = act(sum over (c,r,s) of x(n,c,h,w) w(k,c,r,s) + b(k)), h = p*stride
// - pad + r, w = q*stride - pad + s (zero outside the image).
template <Activation Act>
struct ConvForwardProblem {
  int M, N, K;  // N*P*Q, filters, C*R*S
  Conv2dShape s;
  int pq, q_size, rs;
  const float* x;
  const float* w;
  const float* bias;
  float* act_out;
  static constexpr bool kAContigK = false;  // consecutive pixels: consecutive x addresses
  static constexpr bool kBContigJ = false;  // w (K,C,R,S): (c,r,s) runs along memory
  __device__ float a(int i, int k) const { return im2col_at(s, x, pq, q_size, rs, i, k); }
  __device__ float b(int k, int j) const { return w[size_t(j) * K + k]; }
  __device__ void store(int i, int j, float acc) const {
    const int n = i / pq;
    act_out[(size_t(n) * N + j) * pq + (i - n * pq)] = activate<Act>(acc + (bias ? bias[j] : 0.f));
  }
};

// [dw | db] (K, C*R*S (+1)) = sum over (n,p,q) of dact(n,k,p,q) [x(n,c,h,w) | 1], h = p*stride -
// pad + r, w = q*stride - pad + s (zero outside the image).
struct ConvWeightGradProblem {
  int M, N, K;  // filters, C*R*S (+1 when db is wanted), N*P*Q
  Conv2dShape s;
  int crs, rs, pq, q_size;
  const float* dact;
  const float* x;
  float* dw;
  float* db;
  static constexpr bool kAContigK = true;   // dact: (p,q) runs along memory
  static constexpr bool kBContigJ = false;  // x is read along q
  __device__ float a(int i, int k) const {
    const int n = k / pq;
    return dact[(size_t(n) * s.K + i) * pq + (k - n * pq)];
  }
  __device__ float b(int k, int j) const {
    return j >= crs ? 1.f : im2col_at(s, x, pq, q_size, rs, k, j);
  }
  __device__ void store(int i, int j, float acc) const {
    if (j < crs) {
      if (dw) dw[size_t(i) * crs + j] = acc;
    } else {
      db[i] = acc;
    }
  }
};

// dx (N*H*W pixels, C) = sum over (k,r,s) of dact(n,k,p,q) w(k,c,r,s), where p*stride = h + pad
// - r and q*stride = w + pad - s land on an output (else the term is zero).
struct ConvDataGradProblem {
  int M, N, K;  // N*H*W, C, K*R*S
  Conv2dShape s;
  int hw, rs, p_size, q_size;
  const float* dact;
  const float* w;
  float* dx;
  static constexpr bool kAContigK = false;  // consecutive pixels: consecutive dact addresses
  static constexpr bool kBContigJ = false;  // w (K,C,R,S): (r,s) runs along memory
  __device__ float a(int i, int k) const {
    const int n = i / hw, e = i - n * hw, h = e / s.W, wi = e - h * s.W;
    const int kf = k / rs, t = k - kf * rs, r = t / s.S, u = t - r * s.S;
    int ph = h + s.pad - r, qw = wi + s.pad - u;
    if (ph < 0 || qw < 0) return 0.f;
    if (s.stride > 1) {
      if (ph % s.stride || qw % s.stride) return 0.f;
      ph /= s.stride;
      qw /= s.stride;
    }
    if (ph >= p_size || qw >= q_size) return 0.f;
    return dact[((size_t(n) * s.K + kf) * p_size + ph) * q_size + qw];
  }
  __device__ float b(int k, int j) const {
    const int kf = k / rs;
    return w[(size_t(kf) * s.C + j) * rs + (k - kf * rs)];
  }
  __device__ void store(int i, int j, float acc) const {
    const int n = i / hw;
    dx[(size_t(n) * s.C + j) * hw + (i - n * hw)] = acc;
  }
};

}  // namespace

void conv2d_forward_gemm(CudaContext& ctx, const Conv2dShape& s, Activation act, const float* x,
                         const float* w, const float* b, float* act_out) {
  const int pq = s.P() * s.Q();
  if (s.N <= 0 || s.K <= 0 || pq <= 0) return;
  // K columns: a tile no wider than K wastes less of each block.
  const GemmVariant v = s.K <= 16 ? GemmVariant::Small
                        : s.K <= 32 ? GemmVariant::Medium : GemmVariant::Auto;
  dispatch_activation(act, [&](auto tag) {
    using Problem = ConvForwardProblem<decltype(tag)::value>;
    const Problem p{s.N * pq, s.K, s.C * s.R * s.S, s, pq, s.Q(), s.R * s.S, x, w, b, act_out};
    run(ctx, v, p, static_cast<const Problem*>(nullptr));
  });
}

void conv2d_backward_gemm(CudaContext& ctx, const Conv2dShape& s, const float* dact,
                          const float* x, const float* w, float* dx, float* dw, float* db) {
  const int pq = s.P() * s.Q(), rs = s.R * s.S, crs = s.C * rs;
  if (dw || db) {
    // A long reduction (every output pixel of the batch) onto a small K x CRS: Auto picks split-K.
    const ConvWeightGradProblem p{s.K, crs + (db ? 1 : 0), s.N * pq, s, crs, rs, pq, s.Q(),
                                  dact, x, dw, db};
    run(ctx, GemmVariant::Auto, p, static_cast<const ConvWeightGradProblem*>(nullptr));
  }
  if (dx) {
    // C columns: a tile no wider than C wastes less of each block.
    const ConvDataGradProblem p{s.N * s.H * s.W, s.C, s.K * rs, s, s.H * s.W, rs, s.P(), s.Q(),
                                dact, w, dx};
    const GemmVariant v = s.C <= 16 ? GemmVariant::Small
                          : s.C <= 32 ? GemmVariant::Medium : GemmVariant::Auto;
    run(ctx, v, p, static_cast<const ConvDataGradProblem*>(nullptr));
  }
}

}  // namespace pcnn::cuda
