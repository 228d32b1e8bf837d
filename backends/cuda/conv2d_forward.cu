// Convolution forward of the cuda backend: kernels each with bias, activation and (when the
// windows tile the output exactly) pooling fused into the epilogue, so one launch writes the
// pooled y and what backward keeps (max pooling's one-byte indices); the plan-taking launcher; and
// the ops conv2d_forward and conv2d_fused_forward. The activation is picked once per thread
// (dispatch_activation), so a new activation needs no edit here. x and y may be stored in 16
// bits (act_io.cuh): the op conv2d_fused_forward_16 runs the same kernels.
#include "backends/cuda/act_io.cuh"
#include "backends/cuda/common.cuh"
#include "backends/cuda/conv2d.cuh"
#include "backends/cuda/conv2d_common.cuh"
#include "backends/cuda/conv2d_forward_mma_launch.hpp"
#include "backends/cuda/conv2d_forward_out.cuh"
#include "backends/cuda/conv2d_forward_strip_launch.hpp"
#include "backends/cuda/conv2d_strip.cuh"
#include "backends/cuda/conv_mma_layout.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/gemm.cuh"
#include "backends/cuda/launch.cuh"
#include "core/activation_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

constexpr int kMaxSmemFloats = kDefaultSmemBytes / 4;  // the default, no opt-in (launch.cuh)
// 512 threads, 1 block/SM minimum: ptxas (CUDA 13) then allows 128 registers, and the
// register tiles of these kernels do not spill (it did with a bare 1024 or 512 bound).
constexpr int kMaxThreads = 512;

// x (N,C,H,W), w (K,C,R,S) -> y (N,K,P,Q); one thread per output, global memory
__global__ void conv2d_forward_kernel_direct(Conv2dShape s, ActIn x, const float* w, FwdOut o) {
  wait_for_previous_kernel();
  const int P = s.P(), Q = s.Q();
  const size_t total = size_t(s.N) * s.K * P * Q;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int q = int(i % Q), p = int((i / Q) % P), k = int((i / (size_t(P) * Q)) % s.K);
    const int n = int(i / (size_t(P) * Q * s.K));
    float acc = o.bias ? o.bias[k] : 0.f;
    for (int c = 0; c < s.C; ++c)
      for (int r = 0; r < s.R; ++r) {
        const int h = p * s.stride - s.pad + r;
        if (h < 0 || h >= s.H) continue;
        const size_t xrow = ((size_t(n) * s.C + c) * s.H + h) * s.W;
        const float* wrow = w + ((size_t(k) * s.C + c) * s.R + r) * s.S;
        for (int t = 0; t < s.S; ++t) {
          const int ww = q * s.stride - s.pad + t;
          if (ww >= 0 && ww < s.W) acc = fmaf(wrow[t], x.load(xrow + ww), acc);
        }
      }
    o.y.store(i, activate(o.act, acc));
  }
}

// One thread's KPT x PW x PW accumulators (its filters' conv outputs) start at their biases.
template <int KPT, int PW>
__device__ __forceinline__ void init_with_bias(float (&acc)[KPT][PW][PW], const float* bias) {
#pragma unroll
  for (int kk = 0; kk < KPT; ++kk)
#pragma unroll
    for (int i = 0; i < PW; ++i)
#pragma unroll
      for (int j = 0; j < PW; ++j) acc[kk][i][j] = bias[kk];
}

// Shared-memory layout of the Tiled kernel: the whole zero-padded image, then the filters.
struct TiledLayout {
  int Hp, Wp, x_floats, w_floats, total;
  __host__ __device__ TiledLayout(const Conv2dShape& s, int kt) {
    Hp = s.H + 2 * s.pad;
    Wp = s.W + 2 * s.pad;
    x_floats = s.C * Hp * Wp;
    w_floats = kt * s.C * s.R * s.S;
    total = x_floats + w_floats + kt;
  }
};

// Whole block: filters k0..k0+kt-1 (zero past K) and their biases into shared memory.
__device__ __forceinline__ void stage_filters(const Conv2dShape& s, const float* w, const float* bias,
                                     int k0, int kt, float* ws, float* bs) {
  const int crs = s.C * s.R * s.S;
  const int have = (s.K - k0 < kt ? s.K - k0 : kt) * crs;  // filters past K read as zeros
  for (int e = threadIdx.x; e < kt * crs; e += blockDim.x) {
    if (e < have) copy_async(ws + e, w + size_t(k0) * crs + e);
    else ws[e] = 0.f;
  }
  for (int e = threadIdx.x; e < kt; e += blockDim.x)
    bs[e] = (bias && k0 + e < s.K) ? bias[k0 + e] : 0.f;
}

// x (N,C,H,W), w (K,C,R,S) -> y (N,K,P/PW,Q/PW) and what FwdOut keeps
// Block (n, k-tile of kt = KPT*groups filters); thread item = (pooled position, filter group):
// KPT filters x PW x PW conv outputs in registers. RS = 5 unrolls a 5x5 filter (0: any R, S).
template <int KPT, int PW, int RS>
__global__ void __launch_bounds__(kMaxThreads, 1)
    conv2d_forward_kernel_tiled(Conv2dShape s, ActIn x, const float* w, FwdOut o, int kt,
                                int ktiles) {
  wait_for_previous_kernel();
  extern __shared__ float smem[];
  const int R = RS ? RS : s.R, S = RS ? RS : s.S, st = s.stride;
  const int n = blockIdx.x / ktiles, k0 = (blockIdx.x % ktiles) * kt;
  const TiledLayout L(s, kt);
  float* xs = smem;
  float* ws = xs + L.x_floats;
  float* bs = ws + L.w_floats;
  stage_padded_image(s, x, n, L.Hp, L.Wp, xs);
  stage_filters(s, w, o.bias, k0, kt, ws, bs);
  copy_async_wait();
  __syncthreads();

  const int P2 = s.P() / PW, Q2 = s.Q() / PW, npos = P2 * Q2, groups = kt / KPT;
  const int crs = s.C * R * S;
  for (int item = threadIdx.x; item < npos * groups; item += blockDim.x) {
    const int pos = item % npos, g = item / npos, pp = pos / Q2, pq = pos % Q2;
    float acc[KPT][PW][PW];
    init_with_bias<KPT, PW>(acc, bs + g * KPT);
    const float* wg = ws + g * KPT * crs;
    for (int c = 0; c < s.C; ++c) {
      const float* xc = xs + (c * L.Hp + pp * PW * st) * L.Wp + pq * PW * st;
      const float* wc = wg + c * R * S;
#pragma unroll
      for (int rr = 0; rr < R; ++rr) {  // R, S are constants when RS != 0
#pragma unroll
          for (int tt = 0; tt < S; ++tt) {
              float wv[KPT];
#pragma unroll
              for (int kk = 0; kk < KPT; ++kk) wv[kk] = wc[kk * crs + rr * S + tt];
#pragma unroll
              for (int i = 0; i < PW; ++i)
#pragma unroll
                for (int j = 0; j < PW; ++j) {
                  const float xv = xc[(i * st + rr) * L.Wp + j * st + tt];
#pragma unroll
                  for (int kk = 0; kk < KPT; ++kk) acc[kk][i][j] = fmaf(wv[kk], xv, acc[kk][i][j]);
                }
          }
      }
    }
    forward_epilogue<KPT, PW>(s, o, n, k0 + g * KPT, pp, pq, acc);
  }
}

// Shared-memory layout of the Ring kernel: RB = RW + STEP padded input rows per channel, where
// RW rows feed one pooled output row and STEP = PW*stride rows are new for the next one.
struct RingLayout {
  int Wp, RW, STEP, RB, x_floats, w_floats, total;
  __host__ __device__ RingLayout(const Conv2dShape& s, int pw, int kt) {
    Wp = s.W + 2 * s.pad;
    RW = (pw - 1) * s.stride + s.R;
    STEP = pw * s.stride;
    RB = RW + STEP;
    x_floats = s.C * RB * Wp;
    w_floats = kt * s.C * s.R * s.S;
    total = x_floats + w_floats + kt;
  }
};

// Whole block: padded input rows [first, last) of image n (x from element xn) into their ring
// slots (row % RB). In-image fp32 words go by cp.async (no register staging, so they overlap the
// compute that follows; 16-bit ones are widened through a register); padding words are plain zero
// stores.
__device__ __forceinline__ void ring_load_rows(const Conv2dShape& s, const RingLayout& L,
                                               const ActIn& x, size_t xn, float* ring, int first,
                                               int last) {
  const int Hp = s.H + 2 * s.pad;
  if (last > Hp) last = Hp;
  const int rows = last > first ? last - first : 0;
  const int first_slot = first % L.RB;  // rows <= RB: a slot wraps at most once
  if (rows > 0)
    for (BoxWalk e(rows, L.Wp); e.plane < s.C; e.next()) {
      const int c = e.plane, ww = e.col, hh = first + e.row, h = hh - s.pad, wi = ww - s.pad;
      const int slot = first_slot + e.row < L.RB ? first_slot + e.row : first_slot + e.row - L.RB;
      float* dst = ring + (c * L.RB + slot) * L.Wp + ww;
      if (h >= 0 && h < s.H && wi >= 0 && wi < s.W)
        x.stage(dst, xn + (size_t(c) * s.H + h) * s.W + wi);
      else
        *dst = 0.f;
    }
  __pipeline_commit();
}

// x (N,C,H,W), w (K,C,R,S) -> y (N,K,P/PW,Q/PW) and what FwdOut keeps
// Block (n, k-tile) walks the pooled rows pp = 0..P2-1; thread item = (pooled column, group).
// While row pp is computed from the ring, the rows row pp+1 adds are already on their way.
template <int KPT, int PW, int RS>
__global__ void __launch_bounds__(kMaxThreads, 1)
    conv2d_forward_kernel_ring(Conv2dShape s, ActIn x, const float* w, FwdOut o, int kt,
                               int ktiles) {
  wait_for_previous_kernel();
  extern __shared__ float smem[];
  const int R = RS ? RS : s.R, S = RS ? RS : s.S, st = s.stride;
  const int n = blockIdx.x / ktiles, k0 = (blockIdx.x % ktiles) * kt;
  const RingLayout L(s, PW, kt);
  float* ring = smem;
  float* ws = ring + L.x_floats;
  float* bs = ws + L.w_floats;
  const size_t xn = size_t(n) * s.C * s.H * s.W;
  stage_filters(s, w, o.bias, k0, kt, ws, bs);
  ring_load_rows(s, L, x, xn, ring, 0, L.RW);  // commits the filter copies too
  __pipeline_wait_prior(0);
  __syncthreads();

  const int P2 = s.P() / PW, Q2 = s.Q() / PW, groups = kt / KPT;
  const int crs = s.C * R * S;
  for (int pp = 0; pp < P2; ++pp) {
    const int top = pp * L.STEP;  // first padded input row of this pooled row
    if (pp + 1 < P2)
      ring_load_rows(s, L, x, xn, ring, max(top + L.RW, top + L.STEP), top + L.STEP + L.RW);
    const int top_slot = top % L.RB;
    for (int item = threadIdx.x; item < Q2 * groups; item += blockDim.x) {
      const int pq = item % Q2, g = item / Q2;
      float acc[KPT][PW][PW];
      init_with_bias<KPT, PW>(acc, bs + g * KPT);
      const float* wg = ws + g * KPT * crs;
      for (int c = 0; c < s.C; ++c) {
        const float* xc = ring + c * L.RB * L.Wp + pq * PW * st;
        const float* wc = wg + c * R * S;
#pragma unroll
        for (int i = 0; i < PW; ++i)
#pragma unroll
          for (int rr = 0; rr < R; ++rr) {
              int slot = top_slot + i * st + rr;
              if (slot >= L.RB) slot -= L.RB;
              const float* xrow = xc + slot * L.Wp;
#pragma unroll
              for (int tt = 0; tt < S; ++tt) {
#pragma unroll
                  for (int j = 0; j < PW; ++j) {
                    const float xv = xrow[j * st + tt];
#pragma unroll
                    for (int kk = 0; kk < KPT; ++kk)
                      acc[kk][i][j] = fmaf(wc[kk * crs + rr * S + tt], xv, acc[kk][i][j]);
                  }
              }
          }
      }
      forward_epilogue<KPT, PW>(s, o, n, k0 + g * KPT, pp, pq, acc);
    }
    __pipeline_wait_prior(0);
    __syncthreads();  // next rows landed; everyone is done with the rows they replace
  }
}

// ---- dispatch ---------------------------------------------------------------------------

struct Choice {
  ConvFwdVariant variant;
  int kpt, pw, kt, ktiles, smem_floats;  // Mma: kpt is its n8 tiles a block (1, 2 or 4)
};

bool pool_fusable(const Conv2dShape& s, const ConvEpilogue& epi) {
  if (epi.pool == PoolKind::None) return true;
  return epi.pool_window == epi.pool_stride && epi.pool_window == 2 && s.P() % 2 == 0 &&
         s.Q() % 2 == 0;
}

// The tensor-core kernel: 16-bit x and y only; output channels in n8 tiles, up to four a block
// (32 filters; more take more blocks an image); the pooling fused or none.
Choice choose_mma(const Conv2dShape& s, const ConvEpilogue& epi, bool sixteen) {
  Choice ch{ConvFwdVariant::Mma, 1, 1, 8, 1, 0};
  ch.pw = epi.pool != PoolKind::None && pool_fusable(s, epi) ? 2 : 1;
  ch.kpt = s.K <= 8 ? 1 : s.K <= 16 ? 2 : 4;
  ch.kt = 8 * ch.kpt;
  ch.ktiles = ceil_div(s.K, ch.kt);
  ch.smem_floats = ceil_div(mma::ConvMmaLayout(s, ch.kt).bytes, 4);
  if (!sixteen) ch.smem_floats = kMaxSmemFloats + 1;  // fp32 runs the other kernels
  return ch;
}

// Filters per thread: 4 where that still leaves ~16k threads, else 2 where that leaves ~8k
// (measured on the H200: LeNet conv1 at N=64 runs 4.9 us with 4 filters a thread, 9.2 us with
// 1; conv2 at N=64, where 4 would leave 6.4k threads, 11.4 us with 2, 15.1 us with 4). Two from
// 8k, not 16k (session 36, H100, conv lab, same run): LeNet-5's conv2 at N=64 (12.8k threads
// with 2) 8.37 us against 9.83 with 1, and its step 1.3 us shorter.
int pick_kpt(CudaContext&, const Conv2dShape& s, int npos) {
  for (int kpt : {4, 2}) {
    const double items = double(s.N) * ceil_div(s.K, kpt) * npos;
    if (s.K >= kpt && items >= (kpt == 4 ? 16384.0 : 8192.0)) return kpt;
  }
  return 1;
}

// The strip kernel: 5x5 at unit stride, the 2x2 pooling fused. 1 filter a thread on one input
// channel, 2 on more where that still fills the multiprocessors (strip_fills), unless the plan
// says 1 to 4 (H100, batch 1024: LeNet-5's conv1 26.3 us with 1 against 34.7 with 2, its conv2
// 31.3 with 2 against 32.0 with 1). A shape it cannot hold, or whose images a block does not
// fit in shared memory (StripStage), gets a size that fits() refuses.
Choice choose_strip(const CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                    const ConvForwardPlan& plan) {
  const int wt = strip_width(s);
  int kpt = plan.k_per_thread;
  if (!kpt) kpt = s.C > 1 && strip_fills(ctx, strip_items(s, 2, wt)) ? 2 : 1;
  Choice ch{ConvFwdVariant::Strip, kpt, 2, 0, 1, 0};
  ch.kt = ceil_div(s.K, ch.kpt) * ch.kpt;
  long long floats = kMaxSmemFloats + 1;
  if (strip_forward_holds(s, epi) && s.N > 0 && s.P() >= 2 && s.Q() >= 2 && ch.kpt >= 1)
    floats = conv2d_forward_strip_floats(s, ch.kpt);
  ch.smem_floats = floats <= kMaxSmemFloats ? int(floats) : kMaxSmemFloats + 1;
  return ch;
}

Choice choose(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
              const ConvForwardPlan& plan, ConvFwdVariant variant, bool sixteen) {
  if (variant == ConvFwdVariant::Mma) return choose_mma(s, epi, sixteen);
  if (variant == ConvFwdVariant::Strip) return choose_strip(ctx, s, epi, plan);
  Choice ch{variant, 1, 1, 0, 1, 0};
  if (variant == ConvFwdVariant::Direct || variant == ConvFwdVariant::Gemm) return ch;
  ch.pw = (epi.pool != PoolKind::None && pool_fusable(s, epi)) ? 2 : 1;
  const int npos = (s.P() / ch.pw) * (s.Q() / ch.pw);
  ch.kpt = plan.k_per_thread ? plan.k_per_thread : pick_kpt(ctx, s, npos);
  const int groups = ceil_div(s.K, ch.kpt);
  // Blocks per image: enough for two blocks per multiprocessor, each at most 1024 threads.
  const int per_block_items = variant == ConvFwdVariant::Ring ? s.Q() / ch.pw : npos;
  const auto smem_floats = [&](int kt) {
    return variant == ConvFwdVariant::Ring ? RingLayout(s, ch.pw, kt).total
                                           : TiledLayout(s, kt).total;
  };
  int ktiles = plan.k_tiles;
  if (!ktiles) {
    // ... and more when the block's filters would not fit in shared memory (16 channels x 32
    // filters of 5x5 at batch 1024 asked for one tile of all 32: 62 KB).
    ktiles = 1;
    while (ktiles < groups && (s.N * ktiles < 2 * ctx.sm_count() ||
                               ceil_div(groups, ktiles) * per_block_items > kMaxThreads ||
                               smem_floats(ceil_div(groups, ktiles) * ch.kpt) > kMaxSmemFloats))
      ++ktiles;
  }
  ch.ktiles = ktiles < groups ? ktiles : groups;
  ch.kt = ceil_div(groups, ch.ktiles) * ch.kpt;
  ch.ktiles = ceil_div(s.K, ch.kt);
  ch.smem_floats = smem_floats(ch.kt);
  return ch;
}

bool fits(const Choice& ch) {
  if (ch.variant == ConvFwdVariant::Mma) return ch.smem_floats <= kMaxSmemFloats;
  if (ch.variant == ConvFwdVariant::Strip)
    return ch.smem_floats <= kMaxSmemFloats && ch.kpt >= 1 && ch.kpt <= 4;
  return ch.variant == ConvFwdVariant::Direct || ch.variant == ConvFwdVariant::Gemm ||
         (ch.smem_floats <= kMaxSmemFloats && (ch.kpt == 1 || ch.kpt == 2 || ch.kpt == 4));
}

// Whether Auto takes the strip kernel: where it fits and the context allows it, and (but under
// PCNN_CONV_STRIP=2) where its threads fill the multiprocessors (strip_fills). A strip thread's
// work is long and serial: on few threads it loses (H100, batch 64: LeNet-5's conv1 7.1 us
// against the Tiled kernel's 4.2, conv2 23.1 against 9.4); at 1024 it wins (26.3 against the
// Ring kernel's 35.5, 32.0 against Tiled's 39.8).
bool auto_takes_strip(const CudaContext& ctx, const Conv2dShape& s, const Choice& strip) {
  if (ctx.strip_level() == 0 || !fits(strip)) return false;
  return ctx.strip_level() >= 2 || strip_fills(ctx, strip_items(s, strip.kpt, strip_width(s)));
}

// sixteen: x and y in 16 bits, where the tensor-core kernel is chosen when it can hold the case
// (an estimate, see notes/tuning-cuda.md; the conv lab times it against the others).
Choice resolve(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
               const ConvForwardPlan& plan, bool sixteen) {
  if (plan.variant != ConvFwdVariant::Auto)
    return choose(ctx, s, epi, plan, plan.variant, sixteen);
  if (sixteen && auto_takes_mma(ctx, s)) {  // ahead of the strips (H100, LeNet-5's conv2 in
    const Choice mma = choose_mma(s, epi, true);  // bf16 at 1024: 24.6 us against 32.5)
    if (fits(mma) && (epi.pool == PoolKind::None || mma.pw == 2)) return mma;
  }
  const Choice strip = choose_strip(ctx, s, epi, plan);
  if (auto_takes_strip(ctx, s, strip)) return strip;
  // The ring walks the rows one block at a time: it pays when there are many rows per block and
  // blocks for several waves (H200, batch 1024: LeNet conv1 34.4 us ring vs 37.5 tiled), and
  // loses when few blocks each walk alone (batch 64: 25.6 vs 4.9 us).
  const Choice tiled = choose(ctx, s, epi, plan, ConvFwdVariant::Tiled, sixteen);
  const Choice ring = choose(ctx, s, epi, plan, ConvFwdVariant::Ring, sixteen);
  const int rows = s.P() / ring.pw;
  const bool ring_pays = s.N * ring.ktiles >= 4 * ctx.sm_count() && rows >= 8;
  if (ring_pays && fits(ring)) return ring;
  if (fits(tiled)) return tiled;
  if (fits(ring)) return ring;
  return choose(ctx, s, epi, plan, ConvFwdVariant::Gemm, sixteen);
}

template <int KPT, int PW, int RS>
void launch_smem_kernel(CudaContext& ctx, const Choice& ch, const Conv2dShape& s, const ActIn& x,
                        const float* w, const FwdOut& o) {
  const int blocks = s.N * ch.ktiles;
  const size_t smem = size_t(ch.smem_floats) * sizeof(float);
  const int items = ch.variant == ConvFwdVariant::Ring
                        ? (s.Q() / PW) * (ch.kt / KPT)
                        : (s.P() / PW) * (s.Q() / PW) * (ch.kt / KPT);
  const int threads = items >= kMaxThreads ? kMaxThreads : (items < 32 ? 32 : (items + 31) / 32 * 32);
  if (ch.variant == ConvFwdVariant::Ring) {
    launch(ctx, "conv2d_forward_kernel_ring", conv2d_forward_kernel_ring<KPT, PW, RS>, blocks,
           threads, smem, s, x, w, o, ch.kt, ch.ktiles);
  } else {
    launch(ctx, "conv2d_forward_kernel_tiled", conv2d_forward_kernel_tiled<KPT, PW, RS>, blocks,
           threads, smem, s, x, w, o, ch.kt, ch.ktiles);
  }
}

template <int KPT, int PW>
void launch_rs(CudaContext& ctx, const Choice& ch, const Conv2dShape& s, const ActIn& x,
               const float* w, const FwdOut& o) {
  if (s.R == 5 && s.S == 5) launch_smem_kernel<KPT, PW, 5>(ctx, ch, s, x, w, o);
  else launch_smem_kernel<KPT, PW, 0>(ctx, ch, s, x, w, o);
}

template <int KPT>
void launch_pw(CudaContext& ctx, const Choice& ch, const Conv2dShape& s, const ActIn& x,
               const float* w, const FwdOut& o) {
  if (ch.pw == 2) launch_rs<KPT, 2>(ctx, ch, s, x, w, o);
  else launch_rs<KPT, 1>(ctx, ch, s, x, w, o);
}

void launch_mma(CudaContext& ctx, const Choice& ch, const Conv2dShape& s, const ActIn& x,
                const float* w, const FwdOut& o) {
  PCNN_CHECK(x.prec != Precision::F32, "cuda conv2d forward: the tensor-core kernel is 16-bit");
  launch_conv2d_forward_mma(ctx, ch.kpt, ch.pw, ch.ktiles, ch.smem_floats, s, x.prec,
                            static_cast<const uint16_t*>(x.p), w, o);
}

// Whether the kernel itself writes y (fused pooling, or none): a 16-bit y then needs nothing
// after it. Otherwise it writes the fp32 pre-pool output and pool2d_forward pools it.
bool writes_y(const Choice& ch, const ConvEpilogue& epi) {
  return epi.pool == PoolKind::None || ch.pw == 2;
}

// The op for fp32 or 16-bit x and y (the latter only where native_16 says so).
void forward_any(CudaBackend& be, const Conv2dShape& s, const ConvEpilogue& epi, const ActIn& x,
                 const float* w, const float* b, const ConvKept& kept, float* scratch,
                 const ActOut& y, const ConvForwardPlan& plan) {
  if (s.y_size() == 0) return;
  CudaContext& ctx = be.context();
  const bool fp32 = x.prec == Precision::F32 && y.prec == Precision::F32;
  // The tensor-core kernel reads its input in 16 bits: not for a first layer's fp32 input.
  const Choice ch = resolve(ctx, s, epi, plan, x.prec != Precision::F32);
  PCNN_CHECK(fits(ch), "cuda conv2d forward: the requested variant does not fit this shape");
  const bool pooled = epi.pool != PoolKind::None;
  const bool pooled_inside = pooled && ch.pw == 2;
  PCNN_CHECK(fp32 || (ch.variant != ConvFwdVariant::Gemm && writes_y(ch, epi)),
             "cuda conv2d forward: no 16-bit form of this case (the composed default runs it)");
  // Pooling after the kernel: the kernel writes the pre-pool output (kept by avg with an
  // activation, else in the transient scratch), then pool2d_forward writes y and argmax.
  float* pre = pre_pool_output(epi, kept, scratch, static_cast<float*>(y.p));
  PCNN_CHECK(pre || pooled_inside,
             "cuda conv2d forward: pooling after the kernel needs the scratch buffer");
  const FwdOut o = pooled_inside ? FwdOut{b, epi.act, epi.pool, kept.act_out, kept.argmax, y}
                   : pooled      ? FwdOut{b, epi.act, PoolKind::None, nullptr, nullptr, pre}
                                 : FwdOut{b, epi.act, PoolKind::None, nullptr, nullptr, y};
  if (ch.variant == ConvFwdVariant::Mma) {
    launch_mma(ctx, ch, s, x, w, o);
  } else if (ch.variant == ConvFwdVariant::Strip) {
    launch_conv2d_forward_strip(ctx, ch.kpt, ch.smem_floats, s, x, w, o);
  } else if (ch.variant == ConvFwdVariant::Gemm) {
    conv2d_forward_gemm(ctx, s, epi.act, static_cast<const float*>(x.p), w, b, pre);
  } else if (ch.variant == ConvFwdVariant::Direct) {
    const int threads = 256;
    launch(ctx, "conv2d_forward_kernel_direct", conv2d_forward_kernel_direct,
           grid_for(s.y_size(), threads, ctx.sm_count()), threads, 0, s, x, w, o);
  } else if (ch.kpt == 4) {
    launch_pw<4>(ctx, ch, s, x, w, o);
  } else if (ch.kpt == 2) {
    launch_pw<2>(ctx, ch, s, x, w, o);
  } else {
    launch_pw<1>(ctx, ch, s, x, w, o);
  }
  if (pooled && !pooled_inside)
    be.pool2d_forward(epi.pool, pooled_shape(s, epi), pre, static_cast<float*>(y.p),
                      kept.argmax);
}

}  // namespace

bool conv2d_forward_supported(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                              const ConvForwardPlan& plan) {
  return fits(resolve(ctx, s, epi, plan, false));
}

bool conv2d_forward_native_16(CudaContext& ctx, const Conv2dShape& s, const ConvEpilogue& epi,
                              bool x16, const ConvForwardPlan& plan) {
  const Choice ch = resolve(ctx, s, epi, plan, x16);
  return fits(ch) && ch.variant != ConvFwdVariant::Gemm && writes_y(ch, epi);
}

void conv2d_fused_forward(CudaBackend& be, const Conv2dShape& s, const ConvEpilogue& epi,
                          const float* x, const float* w, const float* b, const ConvKept& kept,
                          float* scratch, float* y, const ConvForwardPlan& plan) {
  forward_any(be, s, epi, x, w, b, kept, scratch, y, plan);
}

void conv2d_fused_forward_16(CudaBackend& be, Precision p, const Conv2dShape& s,
                             const ConvEpilogue& epi, const uint16_t* x, const float* x32,
                             const float* w, const float* b, const ConvKept& kept, uint16_t* y,
                             const ConvForwardPlan& plan) {
  forward_any(be, s, epi, x32 ? ActIn(x32) : ActIn(p, x), w, b, kept, nullptr, ActOut(p, y),
              plan);
}

}  // namespace cuda

void CudaBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                 const float* b, float* y) {
  ctx_.bind();
  cuda::conv2d_fused_forward(*this, s, ConvEpilogue{}, x, w, b, ConvKept{}, nullptr, y,
                             cuda::ConvForwardPlan{});
}

void CudaBackend::conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi,
                                       const float* x, const float* w, const float* b,
                                       const ConvKept& kept, float* scratch, float* y) {
  ctx_.bind();
  cuda::conv2d_fused_forward(*this, s, epi, x, w, b, kept, scratch, y, cuda::ConvForwardPlan{});
}

// Native where the kernel writes y itself (Mma, Strip, Tiled, Ring, Direct with the pooling fused or
// none); elsewhere the composed default, on the context's staging when the layer passes none
// (stages_16bit).
void CudaBackend::conv2d_fused_forward_16(Precision p, const Conv2dShape& s,
                                          const ConvEpilogue& epi, const uint16_t* x,
                                          const float* x32, const float* w, const float* b,
                                          const ConvKept& kept, float* scratch, float* staging,
                                          uint16_t* y) {
  if (s.y_size() == 0) return;
  ctx_.bind();
  if (!cuda::conv2d_forward_native_16(ctx_, s, epi, !x32, cuda::ConvForwardPlan{})) {
    if (!staging) staging = ctx_.staging16(s.x_size() + fused_output_size(s, epi));
    Backend::conv2d_fused_forward_16(p, s, epi, x, x32, w, b, kept, scratch, staging, y);
    return;
  }
  cuda::conv2d_fused_forward_16(*this, p, s, epi, x, x32, w, b, kept, y, cuda::ConvForwardPlan{});
}

}  // namespace pcnn
