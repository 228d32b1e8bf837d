// Growing a scratch buffer: refuse inside a capture, retire the old buffer, allocate the new one.
#include "backends/cuda/scratch_buffer.hpp"

#include <sstream>

#include "backends/cuda/cuda_context.hpp"
#include "core/check.hpp"

namespace pcnn::cuda {

ScratchBuffer::~ScratchBuffer() {
  if (ptr_) cudaFree(ptr_);  // unchecked: a destructor must not throw
}

void* ScratchBuffer::ensure(size_t bytes, size_t headroom) {
  if (bytes <= bytes_) return ptr_;
  if (ctx_.capturing()) {
    ctx_.abandon_capture();
    std::ostringstream os;
    os << what_ << " must grow to " << bytes << " bytes (has " << bytes_
       << ") while a graph is being captured; run one step eagerly first";
    throw Error(os.str());
  }
  void* old = ptr_;
  ptr_ = nullptr;
  bytes_ = 0;
  ctx_.retire(old);
  ptr_ = malloc_device(bytes + headroom);
  bytes_ = bytes + headroom;
  return ptr_;
}

}  // namespace pcnn::cuda
