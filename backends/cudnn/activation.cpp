// cudnn bias ops (cudnnAddTensor; the gradient through cuBLAS), in the file stem every backend
// keeps them in. The activations themselves are the cuda base's kernels (core/activation_math.hpp
// rather than cudnnActivation*, whose tanh and sigmoid need not round like tanhf / expf).
#include "backends/cudnn/cudnn_backend.hpp"

namespace pcnn {

// y (N,C,HW) += b (C)
void CudnnBackend::bias_add(int N, int C, int HW, const float* b, float* y) {
  context().bind();
  if (N == 0 || C == 0 || HW == 0) return;
  vendor::set_nchw(*desc_a_, N, C, HW, 1);
  vendor::set_nchw(*desc_b_, 1, C, 1, 1);
  const float one = 1.f;
  PCNN_CUDNN_CHECK(cudnnAddTensor(dnn(), &one, *desc_b_, b, &one, *desc_a_, y));
}

// dy (N,C,HW) -> db (C) = sum over N and HW, as two cuBLAS matrix-vector products with a ones
// vector: t (N*C) = dy viewed as (N*C, HW) times ones, then db = t viewed as (N, C), transposed,
// times ones (dense layers, HW == 1, need only the second). cudnnConvolutionBackwardBias was the
// first choice and took 0.37-0.86 ms per call at batch 1024 on an H200 (its calc_bias_diff
// kernels run 6-120 blocks): most of this backend's step, and not what a vendor-library user
// would accept. GEMV is deterministic in cuBLAS (no atomics unless allowed).
void CudnnBackend::bias_backward(int N, int C, int HW, const float* dy, float* db) {
  context().bind();
  if (C == 0) return;
  if (N == 0 || HW == 0) return fill(db, 0.f, size_t(C));
  const float one = 1.f, zero = 0.f;
  const float* ones = ones_of(size_t(HW > N ? HW : N));
  const float* per_image = dy;  // (N, C)
  if (HW > 1) {
    float* t = bias_scratch(size_t(N) * C);
    // Row-major (N*C, HW) is column-major (HW, N*C): t = A^T ones.
    PCNN_CUBLAS_CHECK(cublasSgemv(blas(), CUBLAS_OP_T, HW, N * C, &one, dy, HW, ones, 1, &zero, t, 1));
    per_image = t;
  }
  // Row-major (N, C) is column-major (C, N): db = A ones.
  PCNN_CUBLAS_CHECK(cublasSgemv(blas(), CUBLAS_OP_N, C, N, &one, per_image, C, ones, 1, &zero, db, 1));
}

// Device scratch for the bias gradient: at least n ones (filled when the buffer grows, in stream
// order), and n floats of per-image partial sums.
const float* CudnnBackend::ones_of(size_t n) {
  const size_t had = ones_.bytes();
  float* ones = static_cast<float*>(ones_.ensure(n * sizeof(float)));
  if (ones_.bytes() != had) fill(ones, 1.f, ones_.bytes() / sizeof(float));
  return ones;
}

float* CudnnBackend::bias_scratch(size_t n) {
  return static_cast<float*>(bias_partial_.ensure(n * sizeof(float)));
}

}  // namespace pcnn
