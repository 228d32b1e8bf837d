// OpenMP global average pooling: whole planes per thread, each summed in index order (the
// serial backend's order, so results do not depend on the thread count).
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"

namespace pcnn {

namespace {
// body(plane) for each of the N*C planes of HW values, whole planes per thread.
template <class F>
void for_each_plane(int N, int C, int HW, int threads, F&& body) {
  const int planes = N * C;
  const int team = omp::team_for(size_t(planes) * HW, threads);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int plane = 0; plane < planes; ++plane) body(plane);
}
}  // namespace

// x (N,C,HW) -> y (N,C)
void OpenMPBackend::global_avg_pool_forward(int N, int C, int HW, const float* x, float* y) {
  const float inv = 1.f / float(HW);
  for_each_plane(N, C, HW, threads_, [&](int plane) {
    const float* xi = x + size_t(plane) * HW;
    float acc = 0.f;
    for (int i = 0; i < HW; ++i) acc += xi[i];
    y[plane] = acc * inv;
  });
}

// dy (N,C) -> dx (N,C,HW)
void OpenMPBackend::global_avg_pool_backward(int N, int C, int HW, const float* dy, float* dx) {
  const float inv = 1.f / float(HW);
  for_each_plane(N, C, HW, threads_, [&](int plane) {
    const float g = dy[plane] * inv;
    float* dxi = dx + size_t(plane) * HW;
    for (int i = 0; i < HW; ++i) dxi[i] = g;
  });
}

}  // namespace pcnn
