// MemoryCounter and the counted allocate / deallocate of the backend contract.
#include "backends/memory_counter.hpp"

#include <algorithm>

#include "backends/backend.hpp"

namespace pcnn {

void MemoryCounter::add(const void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  bytes_of_[ptr] = bytes;
  usage_.current += bytes;
  usage_.peak = std::max(usage_.peak, usage_.current);
}

void MemoryCounter::remove(const void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = bytes_of_.find(ptr);
  if (it == bytes_of_.end()) return;
  usage_.current -= it->second;
  bytes_of_.erase(it);
}

MemoryUsage MemoryCounter::usage() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return usage_;
}

void MemoryCounter::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  usage_.peak = usage_.current;
}

void* Backend::allocate(size_t bytes) {
  void* p = allocate_memory(bytes);
  memory_.add(p, bytes);
  return p;
}

void Backend::deallocate(void* ptr) {
  if (!ptr) return;
  memory_.remove(ptr);
  free_memory(ptr);
}

}  // namespace pcnn
