// The bytes a backend has handed out and not taken back, now and at the peak: one counter in
// the contract's base class, so every backend reports its memory the same way.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

namespace pcnn {

struct MemoryUsage {
  size_t current = 0;  // bytes allocated and not yet freed
  size_t peak = 0;     // the most `current` has been (since the last reset_peak)
};

class MemoryCounter {
 public:
  void add(const void* ptr, size_t bytes);
  void remove(const void* ptr);  // a pointer it does not know is ignored
  MemoryUsage usage() const;
  void reset_peak();  // the peak starts again from what is allocated now

 private:
  mutable std::mutex mutex_;  // layers and loader threads may allocate at once
  std::unordered_map<const void*, size_t> bytes_of_;
  MemoryUsage usage_;
};

}  // namespace pcnn
