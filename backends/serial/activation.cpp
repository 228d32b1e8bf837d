// Serial bias and activation kernels.
#include <cmath>

#include "backends/serial/serial_backend.hpp"
#include "core/activation_math.hpp"

namespace pcnn {

// y (N,C,HW) += b (C)
void SerialBackend::bias_add(int N, int C, int HW, const float* b, float* y) {
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) {
      float* row = y + (size_t(n) * C + c) * HW;
      for (int i = 0; i < HW; ++i) row[i] += b[c];
    }
}

// db (C) = sum over n, hw of dy (N,C,HW)
void SerialBackend::bias_backward(int N, int C, int HW, const float* dy, float* db) {
  for (int c = 0; c < C; ++c) db[c] = 0.f;
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) {
      const float* row = dy + (size_t(n) * C + c) * HW;
      float acc = 0.f;
      for (int i = 0; i < HW; ++i) acc += row[i];
      db[c] += acc;
    }
}

void SerialBackend::activation_forward(Activation act, size_t n, const float* x, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = activate(act, x[i]);
}

void SerialBackend::activation_backward(Activation act, size_t n, const float* y,
                                        const float* dy, float* dx) {
  for (size_t i = 0; i < n; ++i) dx[i] = dy[i] * activation_derivative(act, y[i]);
}

}  // namespace pcnn
