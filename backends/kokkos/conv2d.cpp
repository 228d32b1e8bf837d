// Kokkos convolutions as implicit GEMMs on the tiled engine (gemm.hpp): the im2col matrix is
// never built, its elements are gathered from x (or dy) while a team stages its tile in scratch.
// Strided data gradients, whose gather is not affine, go through a column buffer instead.
#include "backends/kokkos/gemm.hpp"
#include "backends/kokkos/kokkos_backend.hpp"
#include "backends/kokkos/pool2d.hpp"

namespace pcnn {

using namespace kk;

// x (N,C,H,W), w (K,C,R,S), b (K) -> y (N,K,P,Q) = act(conv + b):
// y (K, N*PQ) = w (K, CRS) * col (CRS, N*PQ), col gathered from x
void KokkosBackend::conv_forward_impl(const Conv2dShape& s, const float* x, const float* w,
                                      const float* b, Activation act, float* y) {
  const int P = s.P(), Q = s.Q(), PQ = P * Q, CRS = s.C * s.R * s.S;
  const GemmPlan g = plan_gemm(s.K, s.N * PQ, CRS);
  const auto A = matrix(w, CRS, false);
  const auto B = gather(x, s.H, s.W, WindowMap{s.R, s.S, s.W, s.H * s.W, 1},
                        PixelMap{P, Q, s.stride, s.pad, s.W, s.C * s.H * s.W});
  GemmEpilogue epi;
  epi.row_bias = b;
  epi.act = act;
  run_gemm("pcnn::conv2d_forward", g, A, B, GemmOutput<BlockMap>{y, PQ, BlockMap{PQ, s.K * PQ}},
           epi, workspace(kPartials, g.partial_floats()));
}

void KokkosBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                   const float* b, float* y) {
  conv_forward_impl(s, x, w, b, Activation::None, y);
}

// dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W)
void KokkosBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                         float* dx) {
  const int P = s.P(), Q = s.Q(), PQ = P * Q, RS = s.R * s.S, CRS = s.C * RS, HW = s.H * s.W;
  if (s.stride == 1) {
    // dx (C, N*HW) = w' (C, KRS) * dcol (KRS, N*HW), dcol(krs, nhw) = dy[n, k, h+pad-r, w+pad-s]
    const GemmPlan g = plan_gemm(s.C, s.N * HW, s.K * RS);
    const auto A = gather(w, 1, 1, StridedMap{RS}, BlockMap{RS, CRS});
    const auto B = gather(dy, P, Q, WindowMap{s.R, s.S, Q, PQ, -1},
                          PixelMap{s.H, s.W, 1, -s.pad, Q, s.K * PQ});
    run_gemm("pcnn::conv2d_backward_data", g, A, B,
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
           gather(dy, 1, 1, StridedMap{PQ}, BlockMap{PQ, s.K * PQ}),
           GemmOutput<StridedMap>{col, int(cols), StridedMap{1}}, GemmEpilogue{},
           workspace(kPartials, g.partial_floats()));
  const Conv2dShape sh = s;
  Kokkos::parallel_for("pcnn::conv2d_backward_data[col2im]", range(s.x_size()),
                       KOKKOS_LAMBDA(size_t idx) {
    const int xw = int(idx % sh.W), xh = int(idx / sh.W % sh.H);
    const int c = int(idx / (size_t(sh.W) * sh.H) % sh.C), n = int(idx / (size_t(sh.W) * sh.H * sh.C));
    float acc = 0.f;
    for (int r = 0; r < sh.R; ++r) {
      const int ph = xh + sh.pad - r;  // = p * stride when tap r of output row p reads row xh
      if (ph < 0 || ph % sh.stride != 0 || ph / sh.stride >= P) continue;
      for (int t = 0; t < sh.S; ++t) {
        const int qw = xw + sh.pad - t;
        if (qw < 0 || qw % sh.stride != 0 || qw / sh.stride >= Q) continue;
        acc += col[size_t((c * sh.R + r) * sh.S + t) * cols + size_t(n) * PQ +
                   (ph / sh.stride) * Q + qw / sh.stride];
      }
    }
    dx[idx] = acc;
  });
}

// x (N,C,H,W), dy (N,K,P,Q) -> dw (K, CRS) = dy (K, N*PQ) * col^T (N*PQ, CRS); db (K) = sum dy
void KokkosBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x,
                                            const float* dy, float* dw, float* db) {
  const int P = s.P(), Q = s.Q(), PQ = P * Q, CRS = s.C * s.R * s.S;
  // The reduction runs over every image and pixel: long, so the plan splits it across teams.
  const GemmPlan g = plan_gemm(s.K, CRS, s.N * PQ);
  const auto A = gather(dy, 1, 1, StridedMap{PQ}, BlockMap{PQ, s.K * PQ});
  const auto B = gather(x, s.H, s.W, PixelMap{P, Q, s.stride, s.pad, s.W, s.C * s.H * s.W},
                        WindowMap{s.R, s.S, s.W, s.H * s.W, 1});
  run_gemm("pcnn::conv2d_backward_weights", g, A, B,
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
