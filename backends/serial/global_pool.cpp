// Serial global average pooling: one plane's sum in index order, times 1/HW.
#include "backends/serial/serial_backend.hpp"

namespace pcnn {

// x (N,C,HW) -> y (N,C)
void SerialBackend::global_avg_pool_forward(int N, int C, int HW, const float* x, float* y) {
  const float inv = 1.f / float(HW);
  for (size_t plane = 0; plane < size_t(N) * C; ++plane) {
    const float* xi = x + plane * HW;
    float acc = 0.f;
    for (int i = 0; i < HW; ++i) acc += xi[i];
    y[plane] = acc * inv;
  }
}

// dy (N,C) -> dx (N,C,HW)
void SerialBackend::global_avg_pool_backward(int N, int C, int HW, const float* dy, float* dx) {
  const float inv = 1.f / float(HW);
  for (size_t plane = 0; plane < size_t(N) * C; ++plane) {
    const float g = dy[plane] * inv;
    for (int i = 0; i < HW; ++i) dx[plane * HW + i] = g;
  }
}

}  // namespace pcnn
