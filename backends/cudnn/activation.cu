// Activation kernels: one template per function, chosen by a single switch so the inner loop has
// no branch on the activation kind.
#include "backends/cudnn/activation.cuh"
#include "backends/cudnn/cudnn_check.hpp"
#include "backends/cudnn/launch.cuh"
#include "core/activation_math.hpp"

namespace pcnn::vendor {

namespace {

// x (n) -> y (n) = act(x); x may equal y
template <Activation A>
__global__ void activation_forward_kernel_grid(size_t n, const float* x, float* y) {
  PCNN_GRID_STRIDE_LOOP(i, n) y[i] = activate(A, x[i]);
}

// y (n), dy (n) -> dx (n) = dy * act'(y); dy may equal dx
template <Activation A>
__global__ void activation_backward_kernel_grid(size_t n, const float* y, const float* dy,
                                                float* dx) {
  PCNN_GRID_STRIDE_LOOP(i, n) dx[i] = dy[i] * activation_derivative(A, y[i]);
}

template <Activation A>
void forward(cudaStream_t stream, size_t n, const float* x, float* y) {
  activation_forward_kernel_grid<A><<<grid_for(n), kThreads, 0, stream>>>(n, x, y);
  PCNN_CUDA_CHECK_LAUNCH();
}

template <Activation A>
void backward(cudaStream_t stream, size_t n, const float* y, const float* dy, float* dx) {
  activation_backward_kernel_grid<A><<<grid_for(n), kThreads, 0, stream>>>(n, y, dy, dx);
  PCNN_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_activation_forward(cudaStream_t stream, Activation act, size_t n, const float* x,
                               float* y) {
  if (n == 0) return;
  switch (act) {
    case Activation::ReLU: return forward<Activation::ReLU>(stream, n, x, y);
    case Activation::Tanh: return forward<Activation::Tanh>(stream, n, x, y);
    case Activation::Sigmoid: return forward<Activation::Sigmoid>(stream, n, x, y);
    case Activation::None:
      if (x != y) PCNN_CUDA_CHECK(cudaMemcpyAsync(y, x, n * sizeof(float),
                                                  cudaMemcpyDeviceToDevice, stream));
      return;
  }
  throw Error("cudnn activation_forward: unknown activation");
}

void launch_activation_backward(cudaStream_t stream, Activation act, size_t n, const float* y,
                                const float* dy, float* dx) {
  if (n == 0) return;
  switch (act) {
    case Activation::ReLU: return backward<Activation::ReLU>(stream, n, y, dy, dx);
    case Activation::Tanh: return backward<Activation::Tanh>(stream, n, y, dy, dx);
    case Activation::Sigmoid: return backward<Activation::Sigmoid>(stream, n, y, dy, dx);
    case Activation::None:
      if (dy != dx) PCNN_CUDA_CHECK(cudaMemcpyAsync(dx, dy, n * sizeof(float),
                                                    cudaMemcpyDeviceToDevice, stream));
      return;
  }
  throw Error("cudnn activation_backward: unknown activation");
}

}  // namespace pcnn::vendor
