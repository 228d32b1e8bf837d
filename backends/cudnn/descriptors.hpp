// Owning wrappers for cuDNN descriptors and the two library handles: created in the constructor,
// destroyed in the destructor, so a plan or a backend that throws half-built leaks nothing.
// Descriptors are host-side only; the kernels cuDNN launches (and a captured graph) copy what they
// need, so one may be re-set between calls.
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include <memory>

#include "backends/cudnn/cudnn_check.hpp"

namespace pcnn::vendor {

// cudnnHandle_t and cublasHandle_t are pointers to these library structs. Destroying is not
// checked: it runs from destructors.
struct DnnDestroy {
  void operator()(cudnnContext* h) const { cudnnDestroy(h); }
};
struct BlasDestroy {
  void operator()(cublasContext* h) const { cublasDestroy(h); }
};
using DnnHandle = std::unique_ptr<cudnnContext, DnnDestroy>;
using BlasHandle = std::unique_ptr<cublasContext, BlasDestroy>;

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
