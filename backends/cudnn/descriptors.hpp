// Owning wrappers for cuDNN descriptors: created in the constructor, destroyed in the destructor,
// so a plan that throws half-built leaks nothing. Descriptors are host-side only; the kernels
// cuDNN launches (and a captured graph) copy what they need, so one may be re-set between calls.
#pragma once

#include <cudnn.h>

#include "backends/cudnn/cudnn_check.hpp"

namespace pcnn::vendor {

template <class Handle, cudnnStatus_t (*Create)(Handle*), cudnnStatus_t (*Destroy)(Handle)>
class Descriptor {
 public:
  Descriptor() { PCNN_CUDNN_CHECK(Create(&handle_)); }
  ~Descriptor() { Destroy(handle_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  operator Handle() const { return handle_; }

 private:
  Handle handle_ = nullptr;
};

using TensorDesc = Descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                              cudnnDestroyTensorDescriptor>;
using FilterDesc = Descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                              cudnnDestroyFilterDescriptor>;
using ConvDesc = Descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                            cudnnDestroyConvolutionDescriptor>;
using PoolDesc = Descriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                            cudnnDestroyPoolingDescriptor>;

// A packed float32 NCHW tensor descriptor.
inline void set_nchw(cudnnTensorDescriptor_t d, int n, int c, int h, int w) {
  PCNN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
}

}  // namespace pcnn::vendor
