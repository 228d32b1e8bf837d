// Serial backend: identity, host memory, and its factory for the registry.
#include "backends/serial/serial_backend.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "backends/registry.hpp"

namespace pcnn {

void* SerialBackend::allocate_memory(size_t bytes) {
  // Round up: aligned_alloc wants a multiple of the alignment.
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  if (!p) throw std::bad_alloc();
  return p;
}
void SerialBackend::free_memory(void* ptr) { std::free(ptr); }
void SerialBackend::upload(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void SerialBackend::download(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void SerialBackend::copy(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}
void SerialBackend::fill(float* dst, float value, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = value;
}
void SerialBackend::synchronize() {}  // every call has finished when it returns
void SerialBackend::increment(int32_t* counter) { ++*counter; }

std::unique_ptr<Backend> create_serial_backend(const BackendOptions&) {
  return std::make_unique<SerialBackend>();
}

}  // namespace pcnn
