// OpenMP bias and activation kernels: static splits of whole rows or channels, so every output
// is written by one thread and summed in an order fixed by the shape alone.
#include <omp.h>

#include <algorithm>

#include "backends/openmp/activation_span.hpp"
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"
#include "backends/openmp/reduce.hpp"

namespace pcnn {

// y (N,C,HW) += b (C)
void OpenMPBackend::bias_add(int N, int C, int HW, const float* b, float* y) {
  const int team = omp::team_for(size_t(N) * C * HW, threads_);
  if (HW == 1) {
    // Dense layers: one row of C per sample; split the samples.
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
    for (int n = 0; n < N; ++n) {
      float* row = y + size_t(n) * C;
      for (int c = 0; c < C; ++c) row[c] += b[c];
    }
    return;
  }
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int nc = 0; nc < N * C; ++nc) {
    float* row = y + size_t(nc) * HW;
    const float bc = b[nc % C];
    for (int i = 0; i < HW; ++i) row[i] += bc;
  }
}

// dy (N,C,HW) -> db (C) = sum over n, hw: each thread owns whole channels, so db never depends
// on the thread count.
void OpenMPBackend::bias_backward(int N, int C, int HW, const float* dy, float* db) {
  const int team = C > 1 ? omp::team_for(size_t(N) * C * HW, threads_) : 1;
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const auto ch = omp::share(C, omp_get_num_threads(), omp_get_thread_num());
    if (HW == 1) {
      // Dense layers: column sums, in sample order, vectorised across the columns.
      for (int c = ch.begin; c < ch.end; ++c) db[c] = 0.f;
      for (int n = 0; n < N; ++n) {
        const float* row = dy + size_t(n) * C;
        for (int c = ch.begin; c < ch.end; ++c) db[c] += row[c];
      }
    } else {
      for (int c = ch.begin; c < ch.end; ++c) {
        float total = 0.f;
        for (int n = 0; n < N; ++n) total += omp::sum_span(dy + (size_t(n) * C + c) * HW, HW);
        db[c] = total;
      }
    }
  }
}

// y[i] = act(x[i])
void OpenMPBackend::activation_forward(Activation act, size_t n, const float* x, float* y) {
  omp::for_shares(n, omp::team_for(n, threads_), [&](size_t begin, size_t end) {
    omp::act_forward_span(act, end - begin, x + begin, y + begin);
  });
}

// dx[i] = dy[i] * act'(y[i])
void OpenMPBackend::activation_backward(Activation act, size_t n, const float* y,
                                        const float* dy, float* dx) {
  omp::for_shares(n, omp::team_for(n, threads_), [&](size_t begin, size_t end) {
    omp::act_backward_span(act, end - begin, y + begin, dy + begin, dx + begin);
  });
}

}  // namespace pcnn
