// Serial pooling: max (first maximum in window order wins) and average, padded windows clipped
// to the image (core/pool_math.hpp), one plane after another (pool_plane.hpp).
#include "backends/serial/pool_plane.hpp"
#include "backends/serial/serial_backend.hpp"

namespace pcnn {

// x (N,C,H,W) -> y (N,C,P,Q) and, for max given one, argmax (N,C,P,Q)
void SerialBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                                   uint8_t* argmax) {
  const size_t in_plane = size_t(s.H) * s.W, out_plane = size_t(s.P()) * s.Q();
  for (int nc = 0; nc < s.N * s.C; ++nc)
    serial::pool_forward_plane(kind, s, x + nc * in_plane, y + nc * out_plane,
                               argmax ? argmax + nc * out_plane : nullptr);
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W)
void SerialBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                    const float* dy, float* dx) {
  const size_t in_plane = size_t(s.H) * s.W, out_plane = size_t(s.P()) * s.Q();
  for (int nc = 0; nc < s.N * s.C; ++nc)
    serial::pool_backward_plane(kind, s, x + nc * in_plane, dy + nc * out_plane,
                                dx + nc * in_plane);
}

// argmax, y, dy (N,C,P,Q) -> dx (N,C,H,W)
void SerialBackend::max_pool_backward_argmax(const Pool2dShape& s, Activation act,
                                             const uint8_t* argmax, const float* y, const float* dy,
                                             float* dx) {
  const size_t in_plane = size_t(s.H) * s.W, out_plane = size_t(s.P()) * s.Q();
  for (int nc = 0; nc < s.N * s.C; ++nc)
    serial::max_pool_backward_argmax_plane(s, act, argmax + nc * out_plane, y + nc * out_plane,
                                           dy + nc * out_plane, dx + nc * in_plane);
}

}  // namespace pcnn
