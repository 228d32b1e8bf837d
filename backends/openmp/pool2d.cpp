// OpenMP pooling: the N*C planes are split statically among the threads, each plane done whole
// by one thread (so overlapping windows of the backward pass never race).
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"
#include "backends/openmp/pool_plane.hpp"

namespace pcnn {

// x (N,C,H,W) -> y (N,C,P,Q) and, for max given one, argmax (N,C,P,Q)
void OpenMPBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                                   uint8_t* argmax) {
  const int planes = s.N * s.C;
  const size_t in_plane = size_t(s.H) * s.W, out_plane = size_t(s.P()) * s.Q();
  const int team = omp::team_for(s.x_size(), threads_);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int i = 0; i < planes; ++i)
    omp::pool_forward_plane(kind, s, x + size_t(i) * in_plane, y + size_t(i) * out_plane,
                            argmax ? argmax + size_t(i) * out_plane : nullptr);
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W)
void OpenMPBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                    const float* dy, float* dx) {
  const int planes = s.N * s.C;
  const size_t in_plane = size_t(s.H) * s.W, out_plane = size_t(s.P()) * s.Q();
  const int team = omp::team_for(s.x_size(), threads_);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int i = 0; i < planes; ++i)
    omp::pool_backward_plane(kind, s, x + size_t(i) * in_plane, dy + size_t(i) * out_plane,
                             dx + size_t(i) * in_plane);
}

// argmax, y, dy (N,C,P,Q) -> dx (N,C,H,W)
void OpenMPBackend::max_pool_backward_argmax(const Pool2dShape& s, Activation act,
                                             const uint8_t* argmax, const float* y, const float* dy,
                                             float* dx) {
  const int planes = s.N * s.C;
  const size_t in_plane = size_t(s.H) * s.W, out_plane = size_t(s.P()) * s.Q();
  const int team = omp::team_for(s.x_size(), threads_);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int i = 0; i < planes; ++i) {
    const size_t o = size_t(i) * out_plane;
    omp::max_pool_backward_argmax_plane(s, act, argmax + o, y + o, dy + o,
                                        dx + size_t(i) * in_plane);
  }
}

}  // namespace pcnn
