// Dense ops of the cuda backend: GEMM and the fused linear layer. Every product goes through
// gemm_tile.cuh; the "problems" below only say how operands are read and results written, which
// is where the fusing lives. The activation is a template argument of the linear problems, picked
// once per launch (dispatch_activation), so a new activation needs no edit here.
#include <algorithm>
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/gemm_mma.cuh"
#include "backends/cuda/gemm_tile.cuh"
#include "backends/cuda/launch.cuh"
#include "core/activation_math.hpp"
#include "core/precision.hpp"

namespace pcnn {

namespace cuda {

namespace {

constexpr int kSplitK = 128;   // K per split block, about 4 K steps of the small tile
constexpr int kMaxSplits = 16;

// How a dense problem reads and writes the activations and their gradients: fp32 as they are,
// or 16-bit storage widened as a tile loads it and rounded as the epilogue stores it
// (core/precision.hpp). The tiles, the sums, the weights and the weight gradients stay fp32,
// so a 16-bit problem computes the bits the composed default gives (widen, fp32 op, round)
// without its three conversion launches and staging copies.
struct F32Store {
  using T = float;
  __device__ float load(const float* p, size_t i) const { return p[i]; }
  __device__ void store(float* p, size_t i, float v) const { p[i] = v; }
};
struct Bits16Store {
  using T = uint16_t;
  Precision prec;
  __device__ float load(const uint16_t* p, size_t i) const {
    return widen_from_storage(prec, p[i]);
  }
  __device__ void store(uint16_t* p, size_t i, float v) const {
    p[i] = round_to_storage(prec, v);
  }
};

// C(M,N) = alpha op(A) op(B) + beta C, op chosen at compile time
template <bool TA, bool TB>
struct GemmProblem {
  int M, N, K;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  float alpha, beta;
  float* C;
  int ldc;
  static constexpr bool kAContigK = !TA;  // A (M,K) row-major: k runs along memory
  static constexpr bool kBContigJ = !TB;  // B (K,N) row-major: j runs along memory
  __device__ float a(int i, int k) const {
    return TA ? A[size_t(k) * lda + i] : A[size_t(i) * lda + k];
  }
  __device__ float b(int k, int j) const {
    return TB ? B[size_t(j) * ldb + k] : B[size_t(k) * ldb + j];
  }
  __device__ void store(int i, int j, float acc) const {
    float* c = C + size_t(i) * ldc + j;
    *c = beta == 0.f ? alpha * acc : alpha * acc + beta * *c;  // beta 0: NaNs in C ignored
  }
};

// y (N,out) = act(x (N,in) w^T + b): A = x, B = w^T; Act fixed at compile time (a switch per
// stored or loaded element is what the five-activation table would otherwise cost).
template <Activation Act, class S = F32Store>
struct LinearForwardProblem {
  int M, N, K;  // batch, out, in
  const typename S::T* x;
  const float* w;
  const float* bias;
  typename S::T* y;
  S io;
  static constexpr bool kAContigK = true;
  static constexpr bool kBContigJ = false;
  __device__ float a(int i, int k) const { return io.load(x, size_t(i) * K + k); }
  __device__ float b(int k, int j) const { return w[size_t(j) * K + k]; }
  __device__ void store(int i, int j, float acc) const {
    io.store(y, size_t(i) * N + j, activate<Act>(acc + (bias ? bias[j] : 0.f)));
  }
};

// d(pre-activation) (batch,out) = dy * act'(y), read where the products need it
template <Activation Act, class S = F32Store>
struct PreActGrad {
  const typename S::T* dy;
  const typename S::T* y;
  int out;
  S io;
  __device__ float at(int n, int o) const {
    const size_t i = size_t(n) * out + o;
    if constexpr (Act == Activation::None) return io.load(dy, i);
    else return io.load(dy, i) * activation_derivative<Act>(io.load(y, i));
  }
};

// [dw | db] (out, in+1) = d^T (out,batch) [x | 1] (batch, in+1): the bias gradient is the
// product with a column of ones, so it costs no extra pass over d.
template <Activation Act, class S = F32Store>
struct LinearWeightGradProblem {
  int M, N, K;  // out, in (+1 when db is wanted), batch
  int in;
  PreActGrad<Act, S> d;
  const typename S::T* x;
  float* dw;
  float* db;
  static constexpr bool kAContigK = false;  // d (batch,out): i = o runs along memory
  static constexpr bool kBContigJ = true;
  __device__ float a(int i, int k) const { return d.at(k, i); }
  __device__ float b(int k, int j) const {
    return j < in ? d.io.load(x, size_t(k) * in + j) : 1.f;
  }
  __device__ void store(int i, int j, float acc) const {
    if (j < in) dw[size_t(i) * in + j] = acc;
    else db[i] = acc;
  }
};

// dx (batch,in) = d (batch,out) w (out,in)
template <Activation Act, class S = F32Store>
struct LinearDataGradProblem {
  int M, N, K;  // batch, in, out
  PreActGrad<Act, S> d;
  const float* w;
  typename S::T* dx;
  static constexpr bool kAContigK = true;
  static constexpr bool kBContigJ = true;
  __device__ float a(int i, int k) const { return d.at(i, k); }
  __device__ float b(int k, int j) const { return w[size_t(k) * N + j]; }
  __device__ void store(int i, int j, float acc) const {
    d.io.store(dx, size_t(i) * N + j, acc);
  }
};

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

// C (M,N) = alpha op(A) op(B) + beta C; one thread per output, no reuse (the lab's baseline)
template <bool TA, bool TB>
__global__ void gemm_kernel_naive(GemmProblem<TA, TB> p) {
  wait_for_previous_kernel();
  const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc = fmaf(p.a(i, k), p.b(k, j), acc);
  p.store(i, j, acc);
}

template <class Cfg, class P>
int tiles_of(const P& p) {
  return ceil_div(p.M, Cfg::BM) * ceil_div(p.N, Cfg::BN);
}

// Splits of the K range for one problem: long reductions on few tiles are latency-bound (one
// dependent load round trip per K step), so their K range is shared out over more blocks.
template <class Cfg, class P>
TileGrid grid_of(const P& p, int split_from) {
  TileGrid g;
  if (p.M <= 0 || p.N <= 0) return g;
  g.tiles_n = ceil_div(p.N, Cfg::BN);
  g.tiles = ceil_div(p.M, Cfg::BM) * g.tiles_n;
  g.k_chunk = p.K > 0 ? p.K : 1;
  if (split_from > 0 && p.K >= split_from) {
    int splits = ceil_div(p.K, kSplitK);
    splits = splits > kMaxSplits ? kMaxSplits : splits;
    g.k_chunk = ceil_div(ceil_div(p.K, splits), Cfg::BK) * Cfg::BK;
    g.splits = ceil_div(p.K, g.k_chunk);
  }
  return g;
}

// The grids of one or two problems on tiles of Cfg's size, their split-K scratch, and the launch
// of `kernel` over them (the FMA tiles' kernel or the tensor-core tiles').
template <class Cfg, class P0, class P1, class... Params>
void launch_grids(CudaContext& ctx, const char* name, void (*kernel)(Params...), const P0& p0,
                  const P1* p1, int split_from) {
  TileGrid g0 = grid_of<Cfg>(p0, split_from);
  TileGrid g1 = p1 ? grid_of<Cfg>(*p1, split_from) : TileGrid{};
  const int blocks = g0.tiles * g0.splits + g1.tiles * g1.splits;
  if (blocks == 0) return;
  float* partial = nullptr;
  unsigned* counters = nullptr;
  if (g0.splits > 1 || g1.splits > 1) {
    if (size_t(g0.tiles) + g1.tiles > CudaContext::kCounters) {
      g0 = grid_of<Cfg>(p0, 0);
      g1 = p1 ? grid_of<Cfg>(*p1, 0) : TileGrid{};
    } else {
      partial = ctx.scratch(size_t(blocks) * Cfg::BM * Cfg::BN);
      counters = ctx.counters(size_t(g0.tiles) + g1.tiles);
    }
  }
  launch(ctx, name, kernel, g0.tiles * g0.splits + g1.tiles * g1.splits, Cfg::kThreads, 0, p0,
         g0, p1 ? *p1 : P1{}, g1, partial, counters);
}

template <class Cfg, class P0, class P1>
void launch_tiled(CudaContext& ctx, const P0& p0, const P1* p1, int split_from) {
  launch_grids<Cfg>(ctx, "gemm_kernel_tiled", gemm_kernel_tiled<Cfg, P0, P1>, p0, p1, split_from);
}

// Auto (H200 measurements in notes/tuning-cuda.md): Large once every multiprocessor gets a tile and
// every reduction is long (1024^3: 104 us vs 171 us Medium; but the Simard 1024x1250->100
// backward, whose dx part reduces over only 100, took 114.5 us on Large vs 64.2 on Medium with
// split K); Medium, splitting K >= 512, once half of them get a tile (1024x400->120 forward:
// 11.8 us vs 23.8 us small split-K); else small tiles with split K (64x400->120 forward 5.8 us vs
// 10.8 unsplit; 1024x120->84 backward 13.2 vs 50.5 Medium unsplit).
constexpr int kLargeMinK = 256;

template <class P0, class P1>
GemmVariant pick(CudaContext& ctx, GemmVariant v, const P0& p0, const P1* p1) {
  if (v != GemmVariant::Auto) return v;
  auto total = [&](auto cfg) {
    using Cfg = decltype(cfg);
    return tiles_of<Cfg>(p0) + (p1 ? tiles_of<Cfg>(*p1) : 0);
  };
  const bool long_k = p0.K >= kLargeMinK && (!p1 || p1->K >= kLargeMinK);
  if (long_k && total(TileLarge{}) >= ctx.sm_count()) return GemmVariant::Large;
  if (2 * total(TileMedium{}) >= ctx.sm_count()) return GemmVariant::MediumSplitK;
  return GemmVariant::SmallSplitK;
}

template <class P0, class P1>
void run(CudaContext& ctx, GemmVariant v, const P0& p0, const P1* p1) {
  PCNN_CHECK(v != GemmVariant::Mma && v != GemmVariant::MmaLarge,
             "cuda gemm: the tensor-core tiles take 16-bit linear problems only");
  switch (pick(ctx, v, p0, p1)) {
    case GemmVariant::Large: launch_tiled<TileLarge>(ctx, p0, p1, 0); break;
    case GemmVariant::Medium: launch_tiled<TileMedium>(ctx, p0, p1, 0); break;
    case GemmVariant::MediumSplitK: launch_tiled<TileMedium>(ctx, p0, p1, 512); break;
    case GemmVariant::SmallDeep: launch_tiled<TileSmallDeep>(ctx, p0, p1, 0); break;
    case GemmVariant::SmallSplitK: launch_tiled<TileSmall>(ctx, p0, p1, 256); break;
    default: launch_tiled<TileSmall>(ctx, p0, p1, 0); break;
  }
}

// The tensor-core tiles (gemm_mma.cuh) for 16-bit problems, in p's format; K >= 512 split as
// MediumSplitK does.
template <class T, class P0, class P1>
void launch_mma(CudaContext& ctx, Precision p, const P0& p0, const P1* p1) {
  const auto kernel = p == Precision::F16 ? gemm_kernel_mma<T, true, P0, P1>
                                          : gemm_kernel_mma<T, false, P0, P1>;
  launch_grids<T>(ctx, "gemm_kernel_mma", kernel, p0, p1, 512);
}

// Auto: the 64 x 64 tiles once every multiprocessor gets one, else 32 x 32.
template <class P0, class P1>
void run_mma(CudaContext& ctx, GemmVariant v, Precision p, const P0& p0, const P1* p1) {
  const auto large_tiles = [&](const auto& q) {
    return ceil_div(q.M, MmaTileLarge::BM) * ceil_div(q.N, MmaTileLarge::BN);
  };
  if (v == GemmVariant::Auto)
    v = large_tiles(p0) + (p1 ? large_tiles(*p1) : 0) >= ctx.sm_count() ? GemmVariant::MmaLarge
                                                                          : GemmVariant::Mma;
  if (v == GemmVariant::MmaLarge) launch_mma<MmaTileLarge>(ctx, p, p0, p1);
  else launch_mma<MmaTileSmall>(ctx, p, p0, p1);
}

// The multiply-adds from which Auto takes the tensor-core tiles for a 16-bit problem. Gemm lab,
// H100, 2026-12-05, bf16: the FMA tiles reading 16 bits were faster on every LeNet-5 dense layer
// at batch 64 and 1024 (1024x400->120 forward 14.0 us vs 15.6; 1024x120->84 backward 11.8 vs
// 20.8; 64x400->120 forward 5.1 vs 15.4), the tensor cores on Simard's 1024x1250->100 (128M:
// forward 26.4 us vs 34.8) and the mlp's 1024x784->300 (241M: 36.3 vs 51.3). Between 49M and
// 128M: a guess. The backward's two problems are judged by the larger: their sum put LeNet-5's
// fc1 backward at 1024 (2 x 49M) on the tensor tiles, 24.5 us against the FMA tiles' 23.8.
constexpr double kMmaMinMacs = 64e6;

template <class P0, class P1>
bool tensor_cores_pay(const CudaContext& ctx, const P0& p0, const P1* p1) {
  if (!ctx.mma_allowed()) return false;
  if (ctx.mma_forced()) return true;
  const auto macs = [](const auto& q) { return double(q.M) * q.N * q.K; };
  return std::max(macs(p0), p1 ? macs(*p1) : 0.0) >= kMmaMinMacs;
}

// fp32 problems on the FMA tiles; 16-bit ones on the tensor-core tiles where they pay (above) or
// are asked for, else on the FMA tiles reading and writing 16 bits.
template <class S, class P0, class P1>
void run_as(CudaContext& ctx, S io, GemmVariant v, const P0& p0, const P1* p1) {
  const bool tensor = v == GemmVariant::Mma || v == GemmVariant::MmaLarge;
  if constexpr (std::is_same_v<S, Bits16Store>) {
    if (tensor || (v == GemmVariant::Auto && tensor_cores_pay(ctx, p0, p1))) {
      run_mma(ctx, v, io.prec, p0, p1);
      return;
    }
  }
  run(ctx, v, p0, p1);
}

template <bool TA, bool TB>
void gemm_typed(CudaContext& ctx, const GemmProblem<TA, TB>& p, GemmVariant v) {
  if (v == GemmVariant::Naive) {
    const dim3 grid(ceil_div(p.N, 128), p.M);
    launch(ctx, "gemm_kernel_naive", gemm_kernel_naive<TA, TB>, grid, 128, 0, p);
    return;
  }
  run(ctx, v, p, static_cast<const GemmProblem<TA, TB>*>(nullptr));
}

}  // namespace

void gemm(CudaContext& ctx, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
          const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
          GemmVariant variant) {
  if (M <= 0 || N <= 0) return;
  if (alpha == 0.f) K = 0;  // C = beta C: the store alone does it
  if (trans_a) {
    if (trans_b) gemm_typed(ctx, GemmProblem<true, true>{M, N, K, A, lda, B, ldb, alpha, beta, C, ldc}, variant);
    else gemm_typed(ctx, GemmProblem<true, false>{M, N, K, A, lda, B, ldb, alpha, beta, C, ldc}, variant);
  } else {
    if (trans_b) gemm_typed(ctx, GemmProblem<false, true>{M, N, K, A, lda, B, ldb, alpha, beta, C, ldc}, variant);
    else gemm_typed(ctx, GemmProblem<false, false>{M, N, K, A, lda, B, ldb, alpha, beta, C, ldc}, variant);
  }
}

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

namespace {
// Both storages through one body: S is F32Store or Bits16Store.
template <class S>
void linear_forward_as(CudaContext& ctx, S io, int N, int in, int out, Activation act,
                       const typename S::T* x, const float* w, const float* b, typename S::T* y,
                       GemmVariant variant) {
  if (N <= 0 || out <= 0) return;
  PCNN_CHECK(variant != GemmVariant::Naive, "cuda linear_forward: no naive variant");
  dispatch_activation(act, [&](auto tag) {
    using Problem = LinearForwardProblem<decltype(tag)::value, S>;
    const Problem p{N, out, in, x, w, b, y, io};
    run_as(ctx, io, variant, p, static_cast<const Problem*>(nullptr));
  });
}

template <class S>
void linear_backward_as(CudaContext& ctx, S io, int N, int in, int out, Activation act,
                        const typename S::T* x, const float* w, const typename S::T* y,
                        const typename S::T* dy, typename S::T* dx, float* dw, float* db,
                        GemmVariant variant) {
  if (out <= 0) return;
  PCNN_CHECK(variant != GemmVariant::Naive, "cuda linear_backward: no naive variant");
  dispatch_activation(act, [&](auto tag) {
    constexpr Activation A = decltype(tag)::value;
    const PreActGrad<A, S> d{dy, y, out, io};
    const LinearWeightGradProblem<A, S> pw{out, in + (db ? 1 : 0), N, in, d, x, dw, db};
    const LinearDataGradProblem<A, S> px{N, in, out, d, w, dx};
    run_as(ctx, io, variant, pw, dx ? &px : nullptr);
  });
}
}  // namespace

void linear_forward(CudaContext& ctx, int N, int in, int out, Activation act, const float* x,
                    const float* w, const float* b, float* y, GemmVariant variant) {
  linear_forward_as(ctx, F32Store{}, N, in, out, act, x, w, b, y, variant);
}

void linear_backward(CudaContext& ctx, int N, int in, int out, Activation act, const float* x,
                     const float* w, const float* y, const float* dy, float* dx, float* dw,
                     float* db, GemmVariant variant) {
  linear_backward_as(ctx, F32Store{}, N, in, out, act, x, w, y, dy, dx, dw, db, variant);
}

void linear_forward_16(CudaContext& ctx, Precision p, int N, int in, int out, Activation act,
                       const uint16_t* x, const float* w, const float* b, uint16_t* y,
                       GemmVariant variant) {
  linear_forward_as(ctx, Bits16Store{p}, N, in, out, act, x, w, b, y, variant);
}

void linear_backward_16(CudaContext& ctx, Precision p, int N, int in, int out, Activation act,
                        const uint16_t* x, const float* w, const uint16_t* y, const uint16_t* dy,
                        uint16_t* dx, float* dw, float* db, GemmVariant variant) {
  linear_backward_as(ctx, Bits16Store{p}, N, in, out, act, x, w, y, dy, dx, dw, db, variant);
}

}  // namespace cuda

void CudaBackend::gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                       const float* A, int lda, const float* B, int ldb, float beta, float* C,
                       int ldc) {
  ctx_.bind();
  cuda::gemm(ctx_, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
             cuda::GemmVariant::Auto);
}

void CudaBackend::linear_forward(int N, int in, int out, Activation act, const float* x,
                                 const float* w, const float* b, float* y) {
  ctx_.bind();
  cuda::linear_forward(ctx_, N, in, out, act, x, w, b, y, cuda::GemmVariant::Auto);
}

// Native 16-bit dense layers: the staging the contract offers is not needed.
void CudaBackend::linear_forward_16(Precision p, int N, int in, int out, Activation act,
                                    const uint16_t* x, const float* w, const float* b,
                                    float* /*staging*/, uint16_t* y) {
  ctx_.bind();
  cuda::linear_forward_16(ctx_, p, N, in, out, act, x, w, b, y, cuda::GemmVariant::Auto);
}

void CudaBackend::linear_backward_16(Precision p, int N, int in, int out, Activation act,
                                     const uint16_t* x, const float* w, const uint16_t* y,
                                     const uint16_t* dy, float* /*scratch*/,
                                     float* /*staging*/, uint16_t* dx, float* dw, float* db) {
  ctx_.bind();
  cuda::linear_backward_16(ctx_, p, N, in, out, act, x, w, y, dy, dx, dw, db,
                           cuda::GemmVariant::Auto);
}

void CudaBackend::linear_backward(int N, int in, int out, Activation act, const float* x,
                                  const float* w, const float* y, const float* dy,
                                  float* /*scratch: d(pre-activation) is never materialised*/,
                                  float* dx, float* dw, float* db) {
  ctx_.bind();
  cuda::linear_backward(ctx_, N, in, out, act, x, w, y, dy, dx, dw, db, cuda::GemmVariant::Auto);
}

}  // namespace pcnn
