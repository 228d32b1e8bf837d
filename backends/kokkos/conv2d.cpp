// Kokkos convolutions as implicit GEMMs on the tiled engine (gemm.hpp): the im2col matrix is
// never built, its elements are read from a zero-padded copy of x (or dy) while a team stages
// its tile in scratch. Strided data gradients, whose taps are not a plain sum of a row and a
// column offset, go through a column buffer and a gathering col2im instead.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "backends/kokkos/gemm.hpp"
#include "backends/kokkos/host_simd.hpp"
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/pool2d.hpp"

namespace pcnn {

namespace kk {

// x (planes,H,W) -> xp (planes,Hp,Wp): x at row top, column left, zeros around it. One team per
// plane: a CPU thread writes each row as a zero run, a copy and a zero run (a select per element
// and a team launch per row cost more than the copy); a GPU spreads rows over its threads.
void pad_planes(const float* x, int planes, int H, int W, int top, int left, int Hp, int Wp,
                float* xp) {
  Kokkos::parallel_for("pcnn::conv2d_pad", plane_policy(size_t(planes)),
                       KOKKOS_LAMBDA(const Member& team) {
    const int plane = team.league_rank();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Hp), [&](int hp) {
      const int h = hp - top;
      float* dst = xp + (size_t(plane) * Hp + hp) * Wp;
      const float* src = x + (size_t(plane) * H + h) * W - left;
      const bool inside = unsigned(h) < unsigned(H);
      if constexpr (kOnHost) {
        // Columns [lo, hi) of the row come from x.
        const int lo = !inside ? Wp : left < 0 ? 0 : left < Wp ? left : Wp;
        const int hi = !inside ? Wp : left + W < lo ? lo : left + W < Wp ? left + W : Wp;
        for (int wp = 0; wp < lo; ++wp) dst[wp] = 0.f;
        if (hi > lo) copy_row(dst + lo, src + lo, hi - lo);
        for (int wp = hi; wp < Wp; ++wp) dst[wp] = 0.f;
      } else {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, Wp), [&](int wp) {
          dst[wp] = inside && unsigned(wp - left) < unsigned(W) ? src[wp] : 0.f;
        });
      }
    });
  });
}

// Data gradient, one team per (image n, input channel c): the columns of that plane,
// col (RS, PQ) = w[:, c]^T (RS, K) * dy_n (K, PQ), are computed into team scratch and folded
// back into the dx plane (col2im) while still there; nothing but dx leaves the team, so there is
// no column buffer in memory and no atomics. Used while the three tiles fit in scratch.
struct DataGradPlanes {
  static constexpr int MR = GemmConfig::MR, NR = GemmConfig::NR;
  Conv2dShape s;
  int P, Q, RS, PQ, TM, TN;  // TM, TN: RS and PQ rounded up to the register block
  const float* dy;
  const float* w;
  float* dx;

  static DataGradPlanes make(const Conv2dShape& s, const float* dy, const float* w, float* dx) {
    DataGradPlanes k{s, s.P(), s.Q(), s.R * s.S, s.P() * s.Q(), 0, 0, dy, w, dx};
    k.TM = (k.RS + MR - 1) / MR * MR;
    k.TN = (k.PQ + NR - 1) / NR * NR;
    return k;
  }
  size_t scratch_bytes() const {
    return ScratchView<float>::shmem_size(size_t(s.K) * TM) +
           ScratchView<float>::shmem_size(size_t(s.K) * TN) +
           ScratchView<float>::shmem_size(size_t(TM) * TN);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int n = team.league_rank() / s.C, c = team.league_rank() % s.C;
    const int K = s.K, H = s.H, W = s.W, stride = s.stride, pad = s.pad;
    ScratchView<float> as(team.team_scratch(0), size_t(K) * TM);  // as(k*TM + rs) = w[k][c][rs]
    ScratchView<float> bs(team.team_scratch(0), size_t(K) * TN);  // bs(k*TN + pq) = dy[n][k][pq]
    ScratchView<float> cs(team.team_scratch(0), size_t(TM) * TN);  // cs(rs*TN + pq) = col
    // Rows of w[:, c] and of dy_n, zero-padded to the register block. A CPU thread copies row by
    // row; a GPU team spreads every element over its threads (its vector length is 1, so a
    // thread per row would issue one load at a time: 212 of LeNet-5's 1,040 us at batch 1024).
    if constexpr (kOnHost) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, K), [&](int k) {
        const float* wk = w + (size_t(k) * s.C + c) * RS;
        const float* dyk = dy + (size_t(n) * K + k) * PQ;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, TM),
                             [&](int rs) { as(k * TM + rs) = rs < RS ? wk[rs] : 0.f; });
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, TN),
                             [&](int pq) { bs(k * TN + pq) = pq < PQ ? dyk[pq] : 0.f; });
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, K * TM), [&](int e) {
        const int k = e / TM, rs = e - k * TM;
        as(e) = rs < RS ? w[(size_t(k) * s.C + c) * RS + rs] : 0.f;
      });
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, K * TN), [&](int e) {
        const int k = e / TN, pq = e - k * TN;
        bs(e) = pq < PQ ? dy[(size_t(n) * K + k) * PQ + pq] : 0.f;
      });
    }
    // A CPU's micro-tiles overwrite the columns (K >= 1: one pass), the GPU's add to zeros.
    if constexpr (!kOnHost)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TM * TN), [&](int e) { cs(e) = 0.f; });
    team.team_barrier();
    const int blocks_n = TN / NR;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (TM / MR) * blocks_n), [&](int u) {
      const int mi = (u / blocks_n) * MR, ni = (u % blocks_n) * NR;
      micro_tile(as.data() + mi, TM, bs.data() + ni, TN, cs.data() + mi * TN + ni, TN, K,
                 imin(MR, RS - mi), true);
    });
    team.team_barrier();

    float* dxp = dx + (size_t(n) * s.C + c) * H * W;
    if constexpr (kOnHost) {
      // One thread owns the plane: add each tap's rows where they belong (the reference's order).
      for (int i = 0; i < H * W; ++i) dxp[i] = 0.f;
      for (int r = 0; r < s.R; ++r)
        for (int t = 0; t < s.S; ++t) {
          const float* col = cs.data() + (r * s.S + t) * TN;
          // Output columns q whose tap t lands inside the image: 0 <= q*stride - pad + t < W.
          const int q_lo = t >= pad ? 0 : (pad - t + stride - 1) / stride;
          int q_hi = (W - 1 + pad - t) / stride;  // inclusive
          if (q_hi > Q - 1) q_hi = Q - 1;
          for (int p = 0; p < P; ++p) {
            const int h = p * stride - pad + r;
            if (h < 0 || h >= H) continue;
            float* out = dxp + h * W - pad + t;
            const float* in = col + p * Q;
            if (stride == 1) {
              for (int q = q_lo; q <= q_hi; ++q) out[q] += in[q];
            } else {
              for (int q = q_lo; q <= q_hi; ++q) out[q * stride] += in[q];
            }
          }
        }
    } else {
      // Threads split the plane's pixels; each gathers its taps from scratch.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, H * W), [&](int i) {
        const int h = i / W, x = i - h * W;
        float acc = 0.f;
        if (stride == 1) {
          // The taps that land on an output form a box: no division or remainder per tap (they
          // were most of this kernel's instructions). Same taps, same order as below.
          const int r_lo = h + pad - (P - 1) > 0 ? h + pad - (P - 1) : 0;
          const int r_hi = h + pad < s.R - 1 ? h + pad : s.R - 1;
          const int t_lo = x + pad - (Q - 1) > 0 ? x + pad - (Q - 1) : 0;
          const int t_hi = x + pad < s.S - 1 ? x + pad : s.S - 1;
          for (int r = r_lo; r <= r_hi; ++r) {
            const int row = (h + pad - r) * Q + x + pad;
            for (int t = t_lo; t <= t_hi; ++t) acc += cs((r * s.S + t) * TN + row - t);
          }
          dxp[i] = acc;
          return;
        }
        for (int r = 0; r < s.R; ++r) {
          int p = h + pad - r;
          if (p < 0) break;
          if (p % stride) continue;
          p /= stride;
          if (p >= P) continue;
          for (int t = 0; t < s.S; ++t) {
            int q = x + pad - t;
            if (q < 0) break;
            if (q % stride) continue;
            q /= stride;
            if (q < Q) acc += cs((r * s.S + t) * TN + p * Q + q);
          }
        }
        dxp[i] = acc;
      });
    }
  }
};

// PCNN_KOKKOS_DGRAD=planes|full|columns forces one data-gradient path (tests and timing of the
// paths the shape heuristic would not pick); unset or anything else: the heuristic.
enum class DataGradPath { Auto, Planes, Full, Columns };
DataGradPath forced_data_grad_path() {
  static const DataGradPath path = [] {
    const char* v = std::getenv("PCNN_KOKKOS_DGRAD");
    const std::string name = v ? v : "";
    return name == "planes" ? DataGradPath::Planes
           : name == "full"  ? DataGradPath::Full
           : name == "columns" ? DataGradPath::Columns
                               : DataGradPath::Auto;
  }();
  return path;
}

// PCNN_KOKKOS_WGRAD=gemm forces the implicit-GEMM weight gradient where the CPU would take its
// direct one (tests run it on the host this way); unset or anything else: the heuristic.
bool forced_weight_grad_gemm() {
  static const bool gemm = [] {
    const char* v = std::getenv("PCNN_KOKKOS_WGRAD");
    return v && std::string(v) == "gemm";
  }();
  return gemm;
}

// Whether the CPU weight gradient has a direct version for this shape (see below).
bool has_weight_grad_direct(const Conv2dShape& s);

// CPU forward as a direct correlation (stride 1, see ForwardDirect below) for this shape?
bool has_forward_direct(const Conv2dShape& s);

#ifndef __CUDACC__
// CPU forward as a direct correlation (stride 1): work item = one image; per output row and
// block of KB filters, vector accumulators along q take every tap (c, r, s) as a broadcast
// weight times a shifted x row, then bias and activation go on in the row's store. x rows are
// read as they lie (padded and widened to QL + S - 1, as for the weight gradient) instead of
// being staged as im2col tiles: with few input channels (the first layer) the GEMM's staging
// costs more than its multiply-adds. Same tap order as the GEMM (c, r, s), so the same sums.
template <int S, int QL, Activation A>
struct ForwardDirect {
  using Vec = simd::Vec;
  static constexpr int L = simd::kLanes, V = QL / L, XL = QL + S - 1;
  // Filters per pass: KB * V accumulators and one x register.
  static constexpr int kMaxKB = (simd::kRegisters - 2) / V < 8 ? (simd::kRegisters - 2) / V : 8;
  static_assert(QL % L == 0 && kMaxKB >= 1, "rows are whole registers");
  Conv2dShape s;
  int P, Q, Hp;
  const float* xq;  // (N, C, Hp, XL)
  const float* w;   // (K, C, R, S)
  const float* b;   // (K) or null
  float* y;         // (N, K, P, Q)

  template <int KB>
  void filters(int k0, int n, int p) const {
    Vec acc[KB][V];
#pragma GCC unroll 8
    for (int j = 0; j < KB; ++j)
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[j][v] = Vec{};
    const size_t filter = size_t(s.C) * s.R * S;
    for (int c = 0; c < s.C; ++c)
      for (int r = 0; r < s.R; ++r) {
        const float* xr = xq + ((size_t(n) * s.C + c) * Hp + p + r) * XL;
        const float* wr = w + (size_t(k0) * s.C * s.R + size_t(c) * s.R + r) * S;
#pragma GCC unroll 8
        for (int t = 0; t < S; ++t)
#pragma GCC unroll 8
          for (int v = 0; v < V; ++v) {
            const Vec xv = simd::load(xr + L * v + t);
#pragma GCC unroll 8
            for (int j = 0; j < KB; ++j) acc[j][v] += wr[j * filter + t] * xv;
          }
      }
    for (int j = 0; j < KB; ++j) {
      float row[QL];
      for (int v = 0; v < V; ++v) simd::store(row + L * v, acc[j][v]);
      const float bias = b ? b[k0 + j] : 0.f;
      float* out = y + ((size_t(n) * s.K + k0 + j) * P + p) * Q;
      for (int q = 0; q < Q; ++q) out[q] = activate<A>(row[q] + bias);
    }
  }

  template <int... R>
  void filters_of(int kb, int k0, int n, int p, std::integer_sequence<int, R...>) const {
    (void)((kb == R + 1 ? (filters<R + 1>(k0, n, p), true) : false) || ...);
  }

  void operator()(const Member& team) const {
    const int n = team.league_rank();
    for (int p = 0; p < P; ++p)
      for (int k = 0; k < s.K; k += kMaxKB) {
        const int kb = s.K - k < kMaxKB ? s.K - k : kMaxKB;
        filters_of(kb, k, n, p, std::make_integer_sequence<int, kMaxKB>{});
      }
  }
};
#endif

}  // namespace kk

using namespace kk;

// x (N,C,H,W) with `pad` zeros around each plane, or x itself when pad == 0
const float* KokkosBackend::padded_input(const Conv2dShape& s, const float* x) {
  if (s.pad == 0) return x;
  const int Hp = s.H + 2 * s.pad, Wp = s.W + 2 * s.pad;
  float* xp = workspace(kPadded, size_t(s.N) * s.C * Hp * Wp);
  pad_planes(x, s.N * s.C, s.H, s.W, s.pad, s.pad, Hp, Wp, xp);
  return xp;
}

// x (N,C,H,W), w (K,C,R,S), b (K) -> y (N,K,P,Q) = act(conv + b):
// y (K, N*PQ) = w (K, CRS) * col (CRS, N*PQ), col gathered from the padded x
void KokkosBackend::conv_forward_impl(const Conv2dShape& s, const float* x, const float* w,
                                      const float* b, Activation act, float* y) {
  const int P = s.P(), Q = s.Q(), PQ = P * Q, CRS = s.C * s.R * s.S;
  const int Hp = s.H + 2 * s.pad, Wp = s.W + 2 * s.pad;
  if (has_forward_direct(s)) {
    forward_direct(s, x, w, b, act, y);
    return;
  }
  const float* xp = padded_input(s, x);
  const GemmPlan g = plan_gemm(s.K, s.N * PQ, CRS);
  dispatch_activation(act, [&](auto tag) {
    GemmEpilogue<decltype(tag)::value> epi;
    epi.row_bias = b;
    run_gemm("pcnn::conv2d_forward", g, matrix(w, CRS, false),
             gather(xp, WindowMap{s.R, s.S, Wp, Hp * Wp, false},
                    PixelMap{P, Q, s.stride, Wp, s.C * Hp * Wp}),
             GemmOutput<BlockMap>{y, PQ, BlockMap{PQ, s.K * PQ}}, epi,
             workspace(kPartials, g.partial_floats()));
  });
}

void KokkosBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                   const float* b, float* y) {
  PCNN_KK_REGION(conv2d_forward);
  conv_forward_impl(s, x, w, b, Activation::None, y);
}

// dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W)
void KokkosBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                         float* dx) {
  PCNN_KK_REGION(conv2d_backward_data);
  const int P = s.P(), Q = s.Q(), PQ = P * Q, RS = s.R * s.S, CRS = s.C * RS, HW = s.H * s.W;
  const int top = s.R - 1 - s.pad, left = s.S - 1 - s.pad;
  // Per plane in scratch when it fits (the minimum K*CRS*PQ multiply-adds per image, nothing
  // extra through memory). Otherwise the "full" convolution of dy, which reads the padded dy for
  // every dx pixel (C*H*W*K*R*S per image, some of it on padding) while that costs less than
  // twice the minimum, else the column buffer.
  const DataGradPlanes planes = DataGradPlanes::make(s, dy, w, dx);
  const size_t scratch = planes.scratch_bytes();
  const DataGradPath forced = forced_data_grad_path();
  if (forced == DataGradPath::Planes ||
      (forced == DataGradPath::Auto &&
       scratch <= (kOnHost ? size_t(256) << 10 : size_t(40) << 10))) {
    TeamPolicy policy = team_policy(s.N * s.C, kOnHost ? 1 : 128);
    policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
    Kokkos::parallel_for("pcnn::conv2d_backward_data[planes]", policy, planes);
    return;
  }
  const bool full_possible = s.stride == 1 && top >= 0 && left >= 0;
  const bool full = forced == DataGradPath::Full ? full_possible
                    : forced == DataGradPath::Columns ? false
                                                       : full_possible && HW < 2 * PQ;
  if (full) {
    // dx (C, N*HW) = w' (C, KRS) * dcol (KRS, N*HW): the "full" convolution of dy, padded by
    // R-1-pad, with the flipped filter: dcol(krs, nhw) = dy[n, k, h+pad-r, w+pad-s]
    const int Pp = P + 2 * top, Qp = Q + 2 * left;
    float* dyp = workspace(kPadded, size_t(s.N) * s.K * Pp * Qp);
    pad_planes(dy, s.N * s.K, P, Q, top, left, Pp, Qp, dyp);
    const GemmPlan g = plan_gemm(s.C, s.N * HW, s.K * RS);
    run_gemm("pcnn::conv2d_backward_data", g, gather(w, StridedMap{RS}, BlockMap{RS, CRS}),
             gather(dyp, WindowMap{s.R, s.S, Qp, Pp * Qp, true},
                    PixelMap{s.H, s.W, 1, Qp, s.K * Pp * Qp}),
             GemmOutput<BlockMap>{dx, HW, BlockMap{HW, s.C * HW}}, GemmEpilogue<>{},
             workspace(kPartials, g.partial_floats()));
    return;
  }
  // Strided: col (CRS, N*PQ) = w^T (CRS, K) * dy (K, N*PQ), then every dx element gathers the
  // taps that read it (no scatter, so no atomics).
  const size_t cols = size_t(s.N) * PQ;
  float* col = workspace(kColumns, size_t(CRS) * cols);
  const GemmPlan g = plan_gemm(CRS, int(cols), s.K);
  run_gemm("pcnn::conv2d_backward_data", g, matrix(w, CRS, true),
           gather(dy, StridedMap{PQ}, BlockMap{PQ, s.K * PQ}),
           GemmOutput<StridedMap>{col, int(cols), StridedMap{1}}, GemmEpilogue<>{},
           workspace(kPartials, g.partial_floats()));
  const Conv2dShape sh = s;
  Kokkos::parallel_for("pcnn::conv2d_backward_data[col2im]", row_policy(size_t(s.N) * s.C * s.H),
                       KOKKOS_LAMBDA(const Member& team) {
    const int row = team.league_rank(), xh = row % sh.H, c = row / sh.H % sh.C;
    const int n = row / (sh.H * sh.C);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, sh.W), [&](int xw) {
      float acc = 0.f;
      for (int r = 0; r < sh.R; ++r) {
        int p = xh + sh.pad - r;  // output row whose tap r reads row xh, if any
        if (p < 0) break;
        if (sh.stride > 1) {
          if (p % sh.stride) continue;
          p /= sh.stride;
        }
        if (p >= P) continue;
        const float* col_r = col + size_t((c * sh.R + r) * sh.S) * cols + size_t(n) * PQ + p * Q;
        for (int t = 0; t < sh.S; ++t) {
          int q = xw + sh.pad - t;
          if (q < 0) break;
          if (sh.stride > 1) {
            if (q % sh.stride) continue;
            q /= sh.stride;
          }
          if (q < Q) acc += col_r[size_t(t) * cols + q];
        }
      }
      dx[size_t(row) * sh.W + xw] = acc;
    });
  });
}

// x (N,C,H,W), dy (N,K,P,Q) -> dw (K, CRS) = dy (K, N*PQ) * col^T (N*PQ, CRS); db (K) = sum dy
void KokkosBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x,
                                            const float* dy, float* dw, float* db) {
  PCNN_KK_REGION(conv2d_backward_weights);
  const int P = s.P(), Q = s.Q(), PQ = P * Q, CRS = s.C * s.R * s.S;
  const int Hp = s.H + 2 * s.pad, Wp = s.W + 2 * s.pad;
  if (has_weight_grad_direct(s) && !kk::forced_weight_grad_gemm()) {
    weight_grad_direct(s, x, dy, dw);
  } else {
    const float* xp = padded_input(s, x);
    // The reduction runs over every image and pixel: long, so the plan splits it across teams.
    const GemmPlan g = plan_gemm(s.K, CRS, s.N * PQ);
    run_gemm("pcnn::conv2d_backward_weights", g,
             gather(dy, StridedMap{PQ}, BlockMap{PQ, s.K * PQ}),
             gather(xp, PixelMap{P, Q, s.stride, Wp, s.C * Hp * Wp},
                    WindowMap{s.R, s.S, Wp, Hp * Wp, false}),
             GemmOutput<StridedMap>{dw, CRS, StridedMap{1}}, GemmEpilogue<>{},
             workspace(kPartials, g.partial_floats()));
  }
  if (db) bias_backward(s.N, s.K, PQ, dy, db);
}

namespace kk {

// CPU weight gradient as a direct correlation (stride 1). On a CPU the implicit GEMM spends its
// time transposing im2col into its B tile; here image rows are read as they lie. Work item
// (c, r, image group) keeps, per k, the S shifted products of a dy row and an x row in vector
// accumulators along q, and reduces them once at the end. x is copied with rows of QL + S - 1
// floats, zeros around the data; dy is read in place, a row's registers loaded Q lanes wide with
// zeros after (masked loads: copying dy cost as much as 1/3 of the kernel). The accumulators are
// GNU vector types: compilers vectorise this loop nest badly on their own. Host compilers only;
// the CUDA build never takes this path (has_weight_grad_direct is false there).
#ifndef __CUDACC__
template <int S, int QL>
struct WeightGradDirect {
  using Vec = simd::Vec;
  static constexpr int L = simd::kLanes, V = QL / L;
  static_assert(QL % L == 0, "rows are whole registers");
  // A pass covers VP of the row's V registers and KB filters: KB * S * VP accumulators, KB dy
  // registers and one x register must fit (AVX2 with 32-wide rows: two passes of 2 registers).
  static constexpr int vectors_per_pass() {
    int vp = V;
    while (vp > 1 && S * vp + 2 > simd::kRegisters) vp /= 2;
    return vp;
  }
  static constexpr int VP = vectors_per_pass();
  static constexpr int filters_per_pass() {
    int kb = 4;
    while (kb > 1 && kb * (S * VP + 1) + 1 > simd::kRegisters) kb /= 2;
    return kb;
  }
  Conv2dShape s;
  int P, Q, Hp, groups, KCRS;
  const float* xq;  // (N, C, Hp, QL + S - 1): x padded by pad, rows widened
  const float* dy;  // (N, K, P, Q) as it is: rows are loaded Q lanes wide, zeros after
  float* partial;   // (groups, K, C, R, S)

  // KB filters k0 .. k0+KB-1 at once: they share every x row load. Every loop inside (n, p) is
  // unrolled so the accumulators stay in registers.
  template <int KB>
  void filters(int k0, int c, int r, int g, int n_begin, int n_end) const {
    constexpr int XL = QL + S - 1;
    const size_t dy_filter = size_t(P) * Q;
    float sum[KB][S] = {};  // q order, whatever the register width and passes
    for (int v0 = 0; v0 < V; v0 += VP) {
      int live[VP];  // lanes of each register that hold dy (the rest load as zeros)
      for (int v = 0; v < VP; ++v) {
        const int n = Q - L * (v0 + v);
        live[v] = n < 0 ? 0 : n > L ? L : n;
      }
      Vec acc[KB][S][VP];
#pragma GCC unroll 8
      for (int j = 0; j < KB; ++j)
#pragma GCC unroll 8
        for (int t = 0; t < S; ++t)
#pragma GCC unroll 8
          for (int v = 0; v < VP; ++v) acc[j][t][v] = Vec{};
      for (int n = n_begin; n < n_end; ++n)
        for (int p = 0; p < P; ++p) {
          const float* d = dy + ((size_t(n) * s.K + k0) * P + p) * Q + L * v0;
          const float* xr = xq + ((size_t(n) * s.C + c) * Hp + p + r) * XL + L * v0;
#pragma GCC unroll 8
          for (int v = 0; v < VP; ++v) {
            Vec dv[KB];
#pragma GCC unroll 8
            for (int j = 0; j < KB; ++j) dv[j] = simd::load_first(d + j * dy_filter + L * v, live[v]);
#pragma GCC unroll 8
            for (int t = 0; t < S; ++t) {
              const Vec xv = simd::load(xr + L * v + t);
#pragma GCC unroll 8
              for (int j = 0; j < KB; ++j) acc[j][t][v] += dv[j] * xv;
            }
          }
        }
      for (int j = 0; j < KB; ++j)
        for (int t = 0; t < S; ++t)
          for (int v = 0; v < VP; ++v)
            for (int l = 0; l < L; ++l) sum[j][t] += acc[j][t][v][l];
    }
    for (int j = 0; j < KB; ++j) {
      float* out = partial + size_t(g) * KCRS + ((size_t(k0 + j) * s.C + c) * s.R + r) * S;
      for (int t = 0; t < S; ++t) out[t] = sum[j][t];
    }
  }

  void operator()(const Member& team) const {
    constexpr int KB = filters_per_pass();
    const int item = team.league_rank();
    const int r = item % s.R, c = item / s.R % s.C, g = item / (s.R * s.C);
    const int n_begin = int(int64_t(s.N) * g / groups);
    const int n_end = int(int64_t(s.N) * (g + 1) / groups);
    int k = 0;
    for (; k + KB <= s.K; k += KB) filters<KB>(k, c, r, g, n_begin, n_end);
    for (; k < s.K; ++k) filters<1>(k, c, r, g, n_begin, n_end);
  }
};
#endif

template <int S, int QL>
void weight_grad_direct(const Conv2dShape& s, const float* x, const float* dy, float* xq,
                        float* partial, int groups) {
#ifndef __CUDACC__
  const int P = s.P(), Q = s.Q(), Hp = s.H + 2 * s.pad;
  pad_planes(x, s.N * s.C, s.H, s.W, s.pad, s.pad, Hp, QL + S - 1, xq);
  const WeightGradDirect<S, QL> kernel{s, P, Q, Hp, groups, s.K * s.C * s.R * s.S, xq, dy, partial};
  Kokkos::parallel_for("pcnn::conv2d_backward_weights[direct]",
                       team_policy(groups * s.C * s.R, 1), kernel);
#else
  (void)s; (void)x; (void)dy; (void)xq; (void)partial; (void)groups;
#endif
}

template <int S, int QL>
void forward_direct(const Conv2dShape& s, const float* x, const float* w, const float* b,
                    Activation act, float* xq, float* y) {
#ifndef __CUDACC__
  const int Hp = s.H + 2 * s.pad;
  pad_planes(x, s.N * s.C, s.H, s.W, s.pad, s.pad, Hp, QL + S - 1, xq);
  dispatch_activation(act, [&](auto tag) {
    const ForwardDirect<S, QL, decltype(tag)::value> kernel{s, s.P(), s.Q(), Hp, xq, w, b, y};
    Kokkos::parallel_for("pcnn::conv2d_forward[direct]", team_policy(s.N, 1), kernel);
  });
#else
  (void)s; (void)x; (void)w; (void)b; (void)act; (void)xq; (void)y;
#endif
}

// The rows the CPU direct kernels are compiled for: stride 1, 3- or 5-wide filters, output rows of
// at most 32 (their register rows). Never on a GPU.
bool direct_rows(const Conv2dShape& s) {
#ifdef __CUDACC__
  (void)s;
  return false;
#else
  return kOnHost && s.stride == 1 && (s.S == 3 || s.S == 5) && s.Q() <= 32;
#endif
}

// Whether forward_direct has a version for this shape: direct rows, and few input channels with
// rows that fill most of their registers (where staging dominates the GEMM; LeNet-5's first
// layer: 28 of 32 lanes, one channel).
bool has_forward_direct(const Conv2dShape& s) {
  const int Q = s.Q(), QL = Q <= 16 ? 16 : 32;
  return direct_rows(s) && 4 * Q >= 3 * QL && s.C * s.R * s.S <= 64;
}

// Whether weight_grad_direct has a version for this shape.
bool has_weight_grad_direct(const Conv2dShape& s) { return direct_rows(s); }

}  // namespace kk

void KokkosBackend::forward_direct(const Conv2dShape& s, const float* x, const float* w,
                                   const float* b, Activation act, float* y) {
  const int QL = s.Q() <= 16 ? 16 : 32;
  float* xq = workspace(kPadded, size_t(s.N) * s.C * (s.H + 2 * s.pad) * (QL + s.S - 1));
  if (s.S == 3)
    QL == 16 ? kk::forward_direct<3, 16>(s, x, w, b, act, xq, y)
             : kk::forward_direct<3, 32>(s, x, w, b, act, xq, y);
  else
    QL == 16 ? kk::forward_direct<5, 16>(s, x, w, b, act, xq, y)
             : kk::forward_direct<5, 32>(s, x, w, b, act, xq, y);
}

void KokkosBackend::weight_grad_direct(const Conv2dShape& s, const float* x, const float* dy,
                                       float* dw) {
  const int KCRS = s.K * s.C * s.R * s.S;
  const int threads = ExecSpace().concurrency();
  const int groups = std::max(1, std::min(s.N, (4 * threads + s.C * s.R - 1) / (s.C * s.R)));
  const int QL = s.Q() <= 16 ? 16 : 32;
  float* partial = workspace(kPartials, size_t(groups) * KCRS);
  float* xq = workspace(kPadded, size_t(s.N) * s.C * (s.H + 2 * s.pad) * (QL + s.S - 1));
  if (s.S == 3)
    QL == 16 ? kk::weight_grad_direct<3, 16>(s, x, dy, xq, partial, groups)
             : kk::weight_grad_direct<3, 32>(s, x, dy, xq, partial, groups);
  else
    QL == 16 ? kk::weight_grad_direct<5, 16>(s, x, dy, xq, partial, groups)
             : kk::weight_grad_direct<5, 32>(s, x, dy, xq, partial, groups);
  // Group partial sums, in group order.
  Kokkos::parallel_for("pcnn::conv2d_backward_weights[group_sum]", range(KCRS),
                       KOKKOS_LAMBDA(size_t e) {
    float sum = 0.f;
    for (int g = 0; g < groups; ++g) sum += partial[size_t(g) * KCRS + e];
    dw[e] = sum;
  });
}

// x -> act(conv(x, w) + b) in one pass -> y = pool(that); the pre-pool output is y itself
// without pooling, avg's kept act_out, or else the transient scratch.
void KokkosBackend::conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi,
                                         const float* x, const float* w, const float* b,
                                         const ConvKept& kept, float* scratch, float* y) {
  PCNN_KK_REGION(conv2d_fused_forward);
  const bool pooled = epi.pool != PoolKind::None;
  float* pre = pre_pool_output(epi, kept, scratch, y);
  conv_forward_impl(s, x, w, b, epi.act, pre);
  if (pooled) kk::pool2d_forward(epi.pool, pooled_shape(s, epi), pre, y, kept.argmax);
}

}  // namespace pcnn
