// cudnn batch normalisation: cuDNN's spatial mode (per channel over N, H, W) for the training
// forward, the inference and the backward. cuDNN keeps the contract's conventions: the running
// variance takes the unbiased batch variance, the factor is PyTorch's momentum, and the saved
// inverse variance is 1/sqrt(var + eps), which the backward reads back. Two cases go to the cuda
// base's kernels: one value per channel (M = 1, no variance to correct) and a backward without
// dx (cuDNN always writes dx). A fused activation is the cuda base's element-wise kernels around
// cuDNN's batch norm: applied to y in place after the forward; before the backward, dy through
// its derivative (from y) into scratch, which cuDNN then reads as its dy.
#include "backends/cudnn/cudnn_backend.hpp"

// cuDNN 9 marks its batch-norm entry points deprecated (in favour of its graph API) but keeps
// them; they are what this backend was written against.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace pcnn {

// x (N,C,HW) as N x C x HW x 1, the statistics as 1 x C x 1 x 1 (spatial mode).
void CudnnBackend::set_batchnorm(int N, int C, int HW) {
  vendor::set_nchw(*desc_a_, N, C, HW, 1);
  vendor::set_nchw(*desc_b_, 1, C, 1, 1);
}

void CudnnBackend::batchnorm_forward_train(
    int N, int C, int HW, Activation act, float eps, float momentum, const float* x,
    const float* gamma, const float* beta, float* y, float* save_mean, float* save_inv_std,
    float* running_mean, float* running_var) {
  if (size_t(N) * HW < 2)
    return CudaBackend::batchnorm_forward_train(N, C, HW, act, eps, momentum, x, gamma, beta, y,
                                                save_mean, save_inv_std, running_mean, running_var);
  context().bind();
  set_batchnorm(N, C, HW);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
      dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, *desc_a_, x, *desc_a_, y, *desc_b_, gamma, beta,
      double(momentum), running_mean, running_var, double(eps), save_mean, save_inv_std));
  if (act != Activation::None) activation_forward(act, size_t(N) * C * HW, y, y);
}

void CudnnBackend::batchnorm_forward_infer(
    int N, int C, int HW, Activation act, float eps, const float* x, const float* gamma,
    const float* beta, const float* running_mean, const float* running_var, float* y) {
  context().bind();
  set_batchnorm(N, C, HW);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
      dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, *desc_a_, x, *desc_a_, y, *desc_b_, gamma, beta,
      running_mean, running_var, double(eps)));
  if (act != Activation::None) activation_forward(act, size_t(N) * C * HW, y, y);
}

void CudnnBackend::batchnorm_backward(
    int N, int C, int HW, Activation act, const float* x, const float* y, const float* dy,
    const float* gamma, const float* save_mean, const float* save_inv_std, float* dx, float* dgamma,
    float* dbeta) {
  if (dx == nullptr || size_t(N) * HW < 2)
    return CudaBackend::batchnorm_backward(N, C, HW, act, x, y, dy, gamma, save_mean, save_inv_std,
                                           dx, dgamma, dbeta);
  context().bind();
  if (act != Activation::None) {
    const size_t n = size_t(N) * C * HW;
    float* g = context().scratch_aux(n);
    activation_backward(act, n, y, dy, g);
    dy = g;
  }
  set_batchnorm(N, C, HW);
  const float one = 1.f, zero = 0.f;
  // The saved statistics already hold eps; cuDNN's own epsilon argument is then not used to
  // recompute them, and CUDNN_BN_MIN_EPSILON is the value it accepts.
  PCNN_CUDNN_CHECK(cudnnBatchNormalizationBackward(
      dnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, *desc_a_, x, *desc_a_, dy,
      *desc_a_, dx, *desc_b_, gamma, dgamma, dbeta, CUDNN_BN_MIN_EPSILON, save_mean,
      save_inv_std));
}

}  // namespace pcnn
