// OpenMP convolution: the batch is split statically among the threads and each image is done
// whole by one thread (an implicit-im2col GEMM on that thread, see conv_gemm.hpp), so forward
// and data-gradient outputs are owned by one thread each. The weight and bias gradients are
// batch sums: each fixed group of images sums into its own slot, and the slots are added in
// group order (batch_partials.hpp), so they do not depend on the thread count either. The fused
// entry points run conv + bias + activation + pooling (or their gradients) per image inside one
// parallel region, while the image is still in cache.
#include <omp.h>

#include <algorithm>

#include "backends/openmp/activation_span.hpp"
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/pool_plane.hpp"
#include "backends/openmp/reduce.hpp"

namespace pcnn {

namespace {

using omp::ConvTables;
using omp::ThreadScratch;

// x_n (C,H,W), w (K,CRS) -> y_n (K,PQ) = w * col_n; overwrites y_n.
void forward_image(const Conv2dShape& s, const ConvTables& t, const float* xn, const float* w,
                   float* yn, ThreadScratch& ts) {
  omp::conv_forward_gemm(s, t, omp::padded_image(s, t, xn, ts.xpad), w, yn, ts.pack);
}

// dy_n (K,PQ), w (K,CRS) -> dx_n (C,H,W) = col2im(w^T dy_n); overwrites dx_n. The scatter goes
// into a padded copy when there is padding, whose border is then dropped.
void backward_data_image(const Conv2dShape& s, const ConvTables& t, const float* dyn,
                         const float* w, float* dxn, ThreadScratch& ts) {
  float* dxp = s.pad ? omp::ensure(ts.dxpad, t.padded_size(s)) : dxn;
  std::fill(dxp, dxp + t.padded_size(s), 0.f);
  omp::conv_data_gemm(s, t, w, dyn, dxp, ts.col, ts.pack);
  if (!s.pad) return;
  for (int c = 0; c < s.C; ++c)
    for (int h = 0; h < s.H; ++h) {
      const float* src = dxp + (size_t(c) * t.Hp + h + s.pad) * t.Wp + s.pad;
      std::copy(src, src + s.W, dxn + (size_t(c) * s.H + h) * s.W);
    }
}

// x_n (C,H,W), dy_n (K,PQ) -> dw (K,CRS) (+)= dy_n col_n^T and db (K) (+)= row sums of dy_n,
// into a group's slot; the group's first image overwrites.
void backward_weights_image(const Conv2dShape& s, const ConvTables& t, const float* xn,
                            const float* dyn, bool first, float* dw, float* db,
                            ThreadScratch& ts) {
  const int PQ = s.P() * s.Q();
  omp::conv_weights_gemm(s, t, omp::padded_image(s, t, xn, ts.xpad), dyn, first ? 0.f : 1.f, dw,
                         ts.pack);
  for (int k = 0; k < s.K; ++k) {
    const float acc = omp::sum_span(dyn + size_t(k) * PQ, size_t(PQ));
    db[k] = first ? acc : db[k] + acc;
  }
}

// body(n, tid) for every image n < N: the batch split statically among the threads, each image
// done whole by thread tid.
template <class Body>
void for_each_image(int N, int threads, const Body& body) {
#pragma omp parallel num_threads(threads) if (N > 1)
  {
    const int tid = omp_get_thread_num();
    const auto images = omp::share(N, omp_get_num_threads(), tid);
    for (int n = images.begin; n < images.end; ++n) body(n, tid);
  }
}

// Batch sums of the weight and bias gradients: body(n, first, dw_slot, db_slot, tid) sums image
// n into its group's slot (first: n is the group's first image, so it overwrites); then the
// slots are added in group order into dw (wn floats) and db (K floats, skipped if nullptr).
template <class Body>
void sum_over_images(omp::GroupPartials& partials, int N, int threads, size_t wn, int K,
                     float* dw, float* db, const Body& body) {
  partials.prepare(N, wn + size_t(K));
#pragma omp parallel num_threads(threads) if (N > 1)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    const int G = partials.groups();
    for (int g = tid; g < G; g += nt) {
      float* part = partials.slot(g);
      const auto images = omp::share(N, G, g);
      for (int n = images.begin; n < images.end; ++n)
        body(n, n == images.begin, part, part + wn, tid);
    }
#pragma omp barrier
    partials.reduce(tid, nt, 0, wn, dw);
    if (db) partials.reduce(tid, nt, wn, size_t(K), db);
  }
}

}  // namespace

// x (N,C,H,W), w (K,C,R,S), b (K) or nullptr -> y (N,K,P,Q)
void OpenMPBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                   const float* b, float* y) {
  const size_t in = size_t(s.C) * s.H * s.W, out = size_t(s.K) * s.P() * s.Q();
  const size_t PQ = size_t(s.P()) * s.Q();
  conv_tables_.build(s);
  for_each_image(s.N, threads_, [&](int n, int tid) {
    float* yn = y + size_t(n) * out;
    forward_image(s, conv_tables_, x + size_t(n) * in, w, yn, scratch(tid));
    if (b)
      for (int k = 0; k < s.K; ++k)
        omp::bias_act_span(Activation::None, PQ, b[k], yn + k * PQ, yn + k * PQ);
  });
}

// dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W)
void OpenMPBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                         float* dx) {
  const size_t in = size_t(s.C) * s.H * s.W, out = size_t(s.K) * s.P() * s.Q();
  conv_tables_.build(s);
  for_each_image(s.N, threads_, [&](int n, int tid) {
    backward_data_image(s, conv_tables_, dy + size_t(n) * out, w, dx + size_t(n) * in,
                        scratch(tid));
  });
}

// x (N,C,H,W), dy (N,K,P,Q) -> dw (K,C,R,S), db (K) or nullptr
void OpenMPBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x,
                                            const float* dy, float* dw, float* db) {
  const size_t in = size_t(s.C) * s.H * s.W, out = size_t(s.K) * s.P() * s.Q();
  conv_tables_.build(s);
  sum_over_images(partials_, s.N, threads_, s.w_size(), s.K, dw, db,
                  [&](int n, bool first, float* dw_slot, float* db_slot, int tid) {
    backward_weights_image(s, conv_tables_, x + size_t(n) * in, dy + size_t(n) * out, first,
                           dw_slot, db_slot, scratch(tid));
  });
}

// x -> act(conv(x) + b) -> y = pool(that), per image on one thread. The pre-pool output is y
// itself without pooling, avg's kept act_out, or else the transient scratch.
void OpenMPBackend::conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi,
                                         const float* x, const float* w, const float* b,
                                         const ConvKept& kept, float* transient, float* y) {
  const size_t in = size_t(s.C) * s.H * s.W, PQ = size_t(s.P()) * s.Q(), out = s.K * PQ;
  const Pool2dShape ps = pooled_shape(s, epi);
  const bool pooled = epi.pool != PoolKind::None;
  const size_t per_map = pooled ? size_t(ps.P()) * ps.Q() : PQ;
  float* pre = pre_pool_output(epi, kept, transient, y);
  conv_tables_.build(s);
  for_each_image(s.N, threads_, [&](int n, int tid) {
    float* an = pre + size_t(n) * out;
    forward_image(s, conv_tables_, x + size_t(n) * in, w, an, scratch(tid));
    for (int k = 0; k < s.K; ++k) {
      float* plane = an + k * PQ;
      omp::bias_act_span(epi.act, PQ, b ? b[k] : 0.f, plane, plane);
      if (!pooled) continue;
      const size_t o = (size_t(n) * s.K + k) * per_map;
      omp::pool_forward_plane(epi.pool, ps, plane, y + o, kept.argmax ? kept.argmax + o : nullptr);
    }
  });
}

// dy (gradient of y) -> d(pre-activation) per image in the thread's scratch -> dw, db (group
// slots added in group order) and dx (per image).
void OpenMPBackend::conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi,
                                          const float* x, const float* w, const ConvKept& kept,
                                          const float* y, const float* dy, float* /*scratch*/,
                                          float* dx, float* dw, float* db) {
  const size_t in = size_t(s.C) * s.H * s.W, PQ = size_t(s.P()) * s.Q(), out = s.K * PQ;
  const Pool2dShape ps = pooled_shape(s, epi);
  const size_t per_map = epi.pool == PoolKind::None ? PQ : size_t(ps.P()) * ps.Q();
  conv_tables_.build(s);
  sum_over_images(partials_, s.N, threads_, s.w_size(), s.K, dw, db,
                  [&](int n, bool first, float* dw_slot, float* db_slot, int tid) {
    ThreadScratch& ts = scratch(tid);
    float* grad = omp::ensure(ts.grad, out);
    const size_t pooled_at = size_t(n) * s.K * per_map;
    const float* dyn = dy + pooled_at;
    const float* d_pre = dyn;  // gradient of this image's pre-activation, (K,PQ)
    if (epi.pool == PoolKind::Max) {
      for (int k = 0; k < s.K; ++k) {
        const size_t o = pooled_at + k * per_map;
        omp::max_pool_backward_argmax_plane(ps, epi.act, kept.argmax + o, y + o, dy + o,
                                            grad + k * PQ);
      }
      d_pre = grad;
    } else if (epi.pool == PoolKind::Avg) {
      for (int k = 0; k < s.K; ++k)  // x unread by avg
        omp::pool_backward_plane(epi.pool, ps, nullptr, dyn + k * per_map, grad + k * PQ);
      if (epi.act != Activation::None)
        omp::act_backward_span(epi.act, out, kept.act_out + size_t(n) * out, grad, grad);
      d_pre = grad;
    } else if (epi.act != Activation::None) {
      omp::act_backward_span(epi.act, out, y + size_t(n) * out, dyn, grad);
      d_pre = grad;
    }
    backward_weights_image(s, conv_tables_, x + size_t(n) * in, d_pre, first, dw_slot, db_slot, ts);
    if (dx) backward_data_image(s, conv_tables_, d_pre, w, dx + size_t(n) * in, ts);
  });
}

}  // namespace pcnn
