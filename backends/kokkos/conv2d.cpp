// Kokkos convolutions as implicit GEMMs on the tiled engine (gemm.hpp): the im2col matrix is
// never built, its elements are read from a zero-padded copy of x (or dy) while a team stages
// its tile in scratch. Strided data gradients, whose taps are not a plain sum of a row and a
// column offset, go through a column buffer and a gathering col2im instead.
#include "backends/kokkos/gemm.hpp"
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/pool2d.hpp"

namespace pcnn {

namespace kk {

// x (planes,H,W) -> xp (planes,Hp,Wp): x at row top, column left, zeros around it
void pad_planes(const float* x, int planes, int H, int W, int top, int left, int Hp, int Wp,
                float* xp) {
  Kokkos::parallel_for("pcnn::conv2d_pad", row_policy(size_t(planes) * Hp),
                       KOKKOS_LAMBDA(const Member& team) {
    const int row = team.league_rank(), plane = row / Hp, h = row - plane * Hp - top;
    float* dst = xp + size_t(row) * Wp;
    const float* src = x + (size_t(plane) * H + h) * W - left;
    const bool inside = unsigned(h) < unsigned(H);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, Wp), [&](int wp) {
      dst[wp] = inside && unsigned(wp - left) < unsigned(W) ? src[wp] : 0.f;
    });
  });
}

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
  const float* xp = padded_input(s, x);
  const GemmPlan g = plan_gemm(s.K, s.N * PQ, CRS);
  GemmEpilogue epi;
  epi.row_bias = b;
  epi.act = act;
  run_gemm("pcnn::conv2d_forward", g, matrix(w, CRS, false),
           gather(xp, WindowMap{s.R, s.S, Wp, Hp * Wp, false},
                  PixelMap{P, Q, s.stride, Wp, s.C * Hp * Wp}),
           GemmOutput<BlockMap>{y, PQ, BlockMap{PQ, s.K * PQ}}, epi,
           workspace(kPartials, g.partial_floats()));
}

void KokkosBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                   const float* b, float* y) {
  conv_forward_impl(s, x, w, b, Activation::None, y);
}

// dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W)
void KokkosBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                         float* dx) {
  const int P = s.P(), Q = s.Q(), PQ = P * Q, RS = s.R * s.S, CRS = s.C * RS, HW = s.H * s.W;
  const int top = s.R - 1 - s.pad, left = s.S - 1 - s.pad;
  // Two ways: the "full" convolution of dy reads the padded dy for every dx pixel (C*H*W*K*R*S
  // multiply-adds per image, many of them on padding); the column path does K*CRS*PQ, the
  // minimum, but writes and re-reads a column buffer. Take the full convolution when it costs
  // less than twice the minimum.
  const bool full = s.stride == 1 && top >= 0 && left >= 0 && HW < 2 * PQ;
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
             GemmOutput<BlockMap>{dx, HW, BlockMap{HW, s.C * HW}}, GemmEpilogue{},
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
           GemmOutput<StridedMap>{col, int(cols), StridedMap{1}}, GemmEpilogue{},
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
  const int P = s.P(), Q = s.Q(), PQ = P * Q, CRS = s.C * s.R * s.S;
  const int Hp = s.H + 2 * s.pad, Wp = s.W + 2 * s.pad;
  const float* xp = padded_input(s, x);
  // The reduction runs over every image and pixel: long, so the plan splits it across teams.
  const GemmPlan g = plan_gemm(s.K, CRS, s.N * PQ);
  run_gemm("pcnn::conv2d_backward_weights", g, gather(dy, StridedMap{PQ}, BlockMap{PQ, s.K * PQ}),
           gather(xp, PixelMap{P, Q, s.stride, Wp, s.C * Hp * Wp},
                  WindowMap{s.R, s.S, Wp, Hp * Wp, false}),
           GemmOutput<StridedMap>{dw, CRS, StridedMap{1}}, GemmEpilogue{},
           workspace(kPartials, g.partial_floats()));
  if (db) bias_backward(s.N, s.K, PQ, dy, db);
}

// x -> act_out = act(conv(x, w) + b) in one pass -> y = pool(act_out)
void KokkosBackend::conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi,
                                         const float* x, const float* w, const float* b,
                                         float* act_out, float* y) {
  conv_forward_impl(s, x, w, b, epi.act, act_out);
  if (epi.pool != PoolKind::None) {
    Pool2dShape p;
    p.N = s.N; p.C = s.K; p.H = s.P(); p.W = s.Q();
    p.window = epi.pool_window; p.stride = epi.pool_stride;
    pool2d_forward(epi.pool, p, act_out, y);
  } else if (y != act_out) {
    copy(y, act_out, s.y_size() * sizeof(float));
  }
}

// dy (gradient of y) -> d(act_out) through the pooling and the activation in one pass, then the
// weight and data gradients
void KokkosBackend::conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi,
                                          const float* x, const float* w, const float* act_out,
                                          const float* dy, float* scratch, float* dx, float* dw,
                                          float* db) {
  const float* d_pre = dy;
  if (epi.pool != PoolKind::None) {
    Pool2dShape p;
    p.N = s.N; p.C = s.K; p.H = s.P(); p.W = s.Q();
    p.window = epi.pool_window; p.stride = epi.pool_stride;
    kk::pool2d_backward(epi.pool, p, act_out, dy, epi.act, scratch);
    d_pre = scratch;
  } else if (epi.act != Activation::None) {
    activation_backward(epi.act, s.y_size(), act_out, dy, scratch);
    d_pre = scratch;
  }
  conv2d_backward_weights(s, x, d_pre, dw, db);
  if (dx) conv2d_backward_data(s, d_pre, w, dx);
}

}  // namespace pcnn
