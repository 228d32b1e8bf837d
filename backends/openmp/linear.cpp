// OpenMP fully connected layer: GEMM, bias and activation in one parallel region, the epilogue
// run by each thread on the block of y it computed (no barrier). Backward: d(pre-activation) by
// rows, one barrier, then dw, db (each thread owns whole columns, summed over the batch in
// order) and dx (GEMM tiles) without further synchronisation.
#include <omp.h>

#include "backends/openmp/activation_span.hpp"
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"

namespace pcnn {

// x (N,in), w (out,in), b (out) or nullptr -> y (N,out) = act(x w^T + b)
void OpenMPBackend::linear_forward(int N, int in, int out, Activation act, const float* x,
                                   const float* w, const float* b, float* y) {
  const bool parallel = double(N) * in * out >= omp::kMinParallelMacs && threads_ > 1;
#pragma omp parallel num_threads(threads_) if (parallel)
  {
    const int tid = omp_get_thread_num();
    const omp::Slab slab = omp::gemm_share(tid, omp_get_num_threads(), false, true, N, out, in,
                                           1.f, x, in, w, in, 0.f, y, out, scratch(tid).pack);
    const size_t cols = size_t(slab.col_end - slab.col_begin);
    for (int n = slab.row_begin; n < slab.row_end; ++n) {
      float* row = y + size_t(n) * out + slab.col_begin;
      if (b) {
        const float* bias = b + slab.col_begin;
        dispatch_activation(act, [&](auto tag) {
          constexpr Activation A = decltype(tag)::value;
          for (size_t j = 0; j < cols; ++j) row[j] = activate<A>(row[j] + bias[j]);
        });
      } else if (act != Activation::None) {
        omp::act_forward_span(act, cols, row, row);
      }
    }
  }
}

// dy (N,out) of y = act(x w^T + b) -> dw (out,in), db (out), dx (N,in) or nullptr
void OpenMPBackend::linear_backward(int N, int in, int out, Activation act, const float* x,
                                    const float* w, const float* y, const float* dy,
                                    float* scratch_pre, float* dx, float* dw, float* db) {
  const bool parallel = double(N) * in * out >= omp::kMinParallelMacs && threads_ > 1;
  const float* d_pre = act == Activation::None ? dy : scratch_pre;  // (N,out)
#pragma omp parallel num_threads(threads_) if (parallel)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    omp::GemmPack& pack = scratch(tid).pack;
    if (act != Activation::None) {
      const auto rows = omp::share(N, nt, tid);
      const size_t begin = size_t(rows.begin) * out, end = size_t(rows.end) * out;
      omp::act_backward_span(act, end - begin, y + begin, dy + begin, scratch_pre + begin);
#pragma omp barrier
    }
    // dw (out,in) = d_pre^T (out,N) x (N,in)
    omp::gemm_share(tid, nt, true, false, out, in, N, 1.f, d_pre, out, x, in, 0.f, dw, in, pack);
    if (db) {
      // Column sums in sample order (the serial order), vectorised across the columns.
      const auto cols = omp::share(out, nt, tid);
      for (int o = cols.begin; o < cols.end; ++o) db[o] = 0.f;
      for (int n = 0; n < N; ++n) {
        const float* row = d_pre + size_t(n) * out;
        for (int o = cols.begin; o < cols.end; ++o) db[o] += row[o];
      }
    }
    // dx (N,in) = d_pre (N,out) w (out,in)
    if (dx)
      omp::gemm_share(tid, nt, false, false, N, in, out, 1.f, d_pre, out, w, in, 0.f, dx, in,
                      pack);
  }
}

}  // namespace pcnn
