// Device scratch that only grows: the cuda kernels' float arena, cudnn's convolution workspace and
// bias-gradient buffers. Growing allocates, so it never happens while a graph is being captured
// (the trainer's eager first step sizes every buffer); an outgrown buffer goes to the context,
// which keeps it as long as an instantiated graph may still point into it.
#pragma once

#include <cstddef>

namespace pcnn::cuda {

class CudaContext;

class ScratchBuffer {
 public:
  // `what` names the buffer in errors, e.g. "cudnn's convolution workspace".
  ScratchBuffer(CudaContext& ctx, const char* what) : ctx_(ctx), what_(what) {}
  ~ScratchBuffer();  // frees the buffer; the owner has synchronised the stream
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  // At least `bytes` of device memory. When it has to grow it allocates bytes + headroom and the
  // contents are undefined. Growing during a capture ends the capture (so the stream stays
  // usable) and throws.
  void* ensure(size_t bytes, size_t headroom = 0);
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  CudaContext& ctx_;
  const char* what_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace pcnn::cuda
