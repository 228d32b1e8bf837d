// DeviceArray<T>: an owning, typed buffer in a backend's memory (RAII over allocate/deallocate),
// with the two host copies tests and the trainer need.
#pragma once

#include <cstddef>
#include <algorithm>
#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace pcnn {

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(Backend& be, size_t n) : be_(&be), n_(n) {
    ptr_ = static_cast<T*>(be.allocate(n * sizeof(T) + (n == 0)));
  }
  DeviceArray(Backend& be, const std::vector<T>& host) : DeviceArray(be, host.size()) {
    upload(host);
  }
  ~DeviceArray() { release(); }
  DeviceArray(DeviceArray&& o) noexcept { *this = std::move(o); }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      release();
      be_ = std::exchange(o.be_, nullptr);
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return ptr_; }
  size_t size() const { return n_; }

  void upload(const std::vector<T>& host) {
    be_->upload(ptr_, host.data(), std::min(host.size(), n_) * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    be_->download(host.data(), ptr_, n_ * sizeof(T));
    return host;
  }

 private:
  void release() {
    if (be_ && ptr_) be_->deallocate(ptr_);
    ptr_ = nullptr;
  }
  Backend* be_ = nullptr;
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

}  // namespace pcnn
