// cudnn bias kernels (cudnnAddTensor, cudnnConvolutionBackwardBias); the activations themselves
// are this folder's kernels (activation.cu) and the class forwards to them.
#include "backends/cudnn/cudnn_backend.hpp"

namespace pcnn {

// y (N,C,HW) += b (C)
void CudnnBackend::bias_add(int N, int C, int HW, const float* b, float* y) {
  if (N == 0 || C == 0 || HW == 0) return;
  vendor::set_nchw(*desc_a_, N, C, HW, 1);
  vendor::set_nchw(*desc_b_, 1, C, 1, 1);
  const float one = 1.f;
  PCNN_CUDNN_CHECK(cudnnAddTensor(dnn_, &one, *desc_b_, b, &one, *desc_a_, y));
}

// dy (N,C,HW) -> db (C) = sum over N and HW
void CudnnBackend::bias_backward(int N, int C, int HW, const float* dy, float* db) {
  if (C == 0) return;
  if (N == 0 || HW == 0) return fill(db, 0.f, size_t(C));
  vendor::set_nchw(*desc_a_, N, C, HW, 1);
  vendor::set_nchw(*desc_b_, 1, C, 1, 1);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnConvolutionBackwardBias(dnn_, &one, *desc_a_, dy, &zero, *desc_b_, db));
}

}  // namespace pcnn
