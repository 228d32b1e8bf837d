// OpenMP pooling: the N*C planes are split statically among the threads, each plane done whole
// by one thread (so overlapping windows of the backward pass never race).
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"
#include "backends/openmp/pool_plane.hpp"

namespace pcnn {

namespace {

// body(in, out) for each (n, c) plane of s, in = its offset in (N,C,H,W), out in (N,C,P,Q).
template <class F>
void for_each_plane(const Pool2dShape& s, int threads, const F& body) {
  const int planes = s.N * s.C;
  const size_t in_plane = size_t(s.H) * s.W, out_plane = size_t(s.P()) * s.Q();
  const int team = omp::team_for(s.x_size(), threads);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int i = 0; i < planes; ++i) body(size_t(i) * in_plane, size_t(i) * out_plane);
}

}  // namespace

// x (N,C,H,W) -> y (N,C,P,Q) and, for max given one, argmax (N,C,P,Q)
void OpenMPBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                                   uint8_t* argmax) {
  for_each_plane(s, threads_, [&](size_t in, size_t out) {
    omp::pool_forward_plane(kind, s, x + in, y + out, argmax ? argmax + out : nullptr);
  });
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W)
void OpenMPBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                    const float* dy, float* dx) {
  for_each_plane(s, threads_, [&](size_t in, size_t out) {
    omp::pool_backward_plane(kind, s, x + in, dy + out, dx + in);
  });
}

// argmax, y, dy (N,C,P,Q) -> dx (N,C,H,W)
void OpenMPBackend::max_pool_backward_argmax(const Pool2dShape& s, Activation act,
                                             const uint8_t* argmax, const float* y, const float* dy,
                                             float* dx) {
  for_each_plane(s, threads_, [&](size_t in, size_t out) {
    omp::max_pool_backward_argmax_plane(s, act, argmax + out, y + out, dy + out, dx + in);
  });
}

}  // namespace pcnn
