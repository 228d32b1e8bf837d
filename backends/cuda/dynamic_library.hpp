// A shared library opened with dlopen on first use. The GPU backends open cuDNN, cuBLAS and NCCL
// this way (backends/cudnn/*_loader.cpp, backends/cuda/nccl_loader.cpp) instead of linking
// them, so that a program with the GPU backends compiled in starts on a machine without those
// libraries and runs its CPU backends there; the GPU backend that needs a missing library
// reports itself unusable.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace pcnn::cuda {

class DynamicLibrary {
 public:
  // Tries each name in turn (a full path, then sonames the loader may find); keeps the first
  // that opens, or says why the first did not and which others were tried.
  DynamicLibrary(std::initializer_list<const char*> names) {
    std::string others;
    for (const char* name : names) {
      handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle_) return;
      const char* why = dlerror();
      if (error_.empty()) error_ = why ? why : std::string("cannot open ") + name;
      else others += (others.empty() ? "" : ", ") + std::string(name);
    }
    if (!others.empty()) error_ += "; also tried " + others;
  }
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  // Never closed: the library's own threads and atexit handlers may outlive any owner here.

  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }  // why it did not open
  // What the library's error-string function answers when the library itself did not open.
  std::string missing_message(const std::string& what) const {
    return "the " + what + " library could not be loaded (" + error_ + ")";
  }
  template <class F>
  F symbol(const char* name) const {
    return handle_ ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace pcnn::cuda

// Defines `const DynamicLibrary& accessor()`, local to the file: the library, opened on the
// first call (a function static, so once and thread-safe) by the names given, in turn.
#define PCNN_DYNAMIC_LIBRARY(accessor, ...)                               \
  static const pcnn::cuda::DynamicLibrary& accessor() {                   \
    static const pcnn::cuda::DynamicLibrary lib{__VA_ARGS__};             \
    return lib;                                                           \
  }

// Defines the C function `name` with return type `ret` as a call of the same function in
// `library` (an expression giving a DynamicLibrary), or `missing` when it cannot be resolved.
// The definition must match the library header's declaration, so the compiler checks `params`.
#define PCNN_DYNAMIC_FORWARD(library, ret, name, missing, params, args) \
  extern "C" ret name params {                                          \
    using Fn = ret(*) params;                                           \
    static const Fn fn = (library).symbol<Fn>(#name);                   \
    return fn ? fn args : missing;                                      \
  }

// Defines the library's error-string function `name` (const char* name(status_type)): the
// library's own text, or, when the library did not open, a line naming `what` and why.
#define PCNN_DYNAMIC_ERROR_STRING(library, what, name, status_type)                    \
  extern "C" const char* name(status_type status) {                                   \
    using Fn = const char* (*)(status_type);                                           \
    static const Fn fn = (library).symbol<Fn>(#name);                                  \
    if (fn) return fn(status);                                                         \
    static const std::string missing = (library).missing_message(what);                \
    return missing.c_str();                                                            \
  }
