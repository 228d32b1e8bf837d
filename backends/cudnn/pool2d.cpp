// cudnn pooling: max and average, padded or not (cuDNN's padding; avg excludes it from the
// count). Forward and average backward through cuDNN; max backward is the cuda base's
// first-maximum gather kernel (it handles padding too), because cudnnPoolingBackward routes a
// tied window's gradient to whichever maximum it likes, and the contract says the first one in
// row-major window order (ties are common in real images: flat backgrounds through ReLU).
#include <algorithm>

#include "backends/cuda/pool2d.cuh"
#include "backends/cudnn/cudnn_backend.hpp"

namespace pcnn {

void CudnnBackend::set_pool(PoolKind kind, const Pool2dShape& s) {
  PCNN_CHECK(kind == PoolKind::Max || kind == PoolKind::Avg,
             "cudnn pool2d: pooling kind must be Max or Avg");
  PCNN_CHECK(s.window > 0 && s.stride > 0 && s.P() > 0 && s.Q() > 0,
             "cudnn pool2d: window " << s.window << " stride " << s.stride
                                     << " does not fit a " << s.H << "x" << s.W << " input");
  PCNN_CHECK(s.pad >= 0 && s.pad < s.window,
             "cudnn pool2d: pad " << s.pad << " must be in [0, window " << s.window << ")");
  // The deterministic max routes each gradient to one element even where windows overlap, and
  // never picks a padded position. Avg divides by the in-image count, as the contract says
  // (without padding that is window^2).
  const cudnnPoolingMode_t mode = kind == PoolKind::Max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                        : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  PCNN_CUDNN_CHECK(cudnnSetPooling2dDescriptor(*pool_desc_, mode, CUDNN_NOT_PROPAGATE_NAN,
                                               s.window, s.window, s.pad, s.pad, s.stride,
                                               s.stride));
  vendor::set_nchw(*desc_a_, s.N, s.C, s.H, s.W);
  vendor::set_nchw(*desc_b_, s.N, s.C, s.P(), s.Q());
}

// x (N,C,H,W) -> y (N,C,P,Q). cuDNN's pooling keeps no indices: where they are asked for (a
// fused convolution's max pooling), the cuda base's kernel runs instead.
void CudnnBackend::pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y,
                                  uint8_t* argmax) {
  if (kind == PoolKind::Max && argmax) return CudaBackend::pool2d_forward(kind, s, x, y, argmax);
  context().bind();
  if (s.N == 0 || s.C == 0) return;
  set_pool(kind, s);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnPoolingForward(dnn(), *pool_desc_, &one, *desc_a_, x, &zero, *desc_b_, y));
}

// x (N,C,H,W), dy (N,C,P,Q) -> dx (N,C,H,W)
void CudnnBackend::pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                                   const float* dy, float* dx) {
  context().bind();
  if (s.N == 0 || s.C == 0) return;
  set_pool(kind, s);
  if (kind == PoolKind::Max) {
    // One thread per input element (at most 65536 blocks, then a grid-stride loop): the launch
    // this backend's step was measured with, not the base's few blocks per multiprocessor.
    const size_t threads = cuda::kPoolBackwardThreads;
    const size_t blocks = (s.x_size() + threads - 1) / threads;
    cuda::pool2d_backward_gather(context(), kind, s, x, dy, dx,
                                 int(std::min(blocks, size_t(1) << 16)));
    return;
  }
  const float one = 1.f, zero = 0.f;
  // Average pooling never reads y: pass dy in its place.
  PCNN_CUDNN_CHECK(cudnnPoolingBackward(dnn(), *pool_desc_, &one, *desc_b_, dy, *desc_b_, dy,
                                        *desc_a_, x, &zero, *desc_a_, dx));
}

}  // namespace pcnn
