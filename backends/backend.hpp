// The one contract between layers and backends: tensor memory, copies, and every kernel a layer,
// the loss, the optimizers or the data pipeline needs. Layers call only this class; a backend
// implements it and adds no layer logic. The kernel ops are listed once, with their shapes and
// conventions, in core/op_list.hpp; this class adds identity, memory and graph capture.
//
// - Pointers are *device* pointers of the backend that allocated them (for host backends, plain
//   host memory). Never dereference them on the host unless the backend says is_host_memory().
// - Every launch may be asynchronous: synchronize() before reading results on the host.
// - Scalars that change during training (learning rate, step counter, loss sums) live in device
//   memory, so a GPU backend can capture a whole training step once and replay it.
// - Backends may allocate scratch lazily on first use; the trainer always runs one step before it
//   asks for graph capture, so no allocation happens while capturing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/memory_counter.hpp"
#include "core/op_list.hpp"

// Memory, copies and the device-side step counter: X(return type, name, parameters).
// allocate_memory / free_memory are the backend's own; everyone else calls Backend::allocate /
// deallocate below, which count the bytes for every backend alike.
#define PCNN_MEMORY_OPS(X)                                                                  \
  X(void*, allocate_memory, (size_t bytes))         /* uninitialised, 256-byte aligned */  \
  X(void, free_memory, (void* ptr))                 /* never nullptr */                    \
  X(void, upload, (void* dst, const void* src, size_t bytes))    /* host -> device */      \
  X(void, download, (void* dst, const void* src, size_t bytes))  /* device -> host, syncs */ \
  X(void, copy, (void* dst, const void* src, size_t bytes))      /* device -> device */    \
  X(void, fill, (float* dst, float value, size_t n))             /* overwrites dst[0..n) */ \
  X(void, synchronize, ())                          /* all launched work done */           \
  /* *counter += 1 (device-side step counter, so a replayed graph advances by itself) */  \
  X(void, increment, (int32_t* counter))

// In a backend that owns its memory: declares the whole memory section.
#define PCNN_OVERRIDE_MEMORY_OP(ret, op, params) ret op params override;
#define PCNN_OVERRIDE_MEMORY_OPS PCNN_MEMORY_OPS(PCNN_OVERRIDE_MEMORY_OP)

// In a backend's class: declares that it defines `op` (parameters from core/op_list.hpp).
#define PCNN_OVERRIDE(op) void op PCNN_OP_PARAMS_##op override;
// Declares every required op (a backend that defines them all); the fused ones are named one by
// one with PCNN_OVERRIDE, since each backend fuses what pays for it.
#define PCNN_OVERRIDE_REQUIRED_OPS PCNN_REQUIRED_OPS(PCNN_OVERRIDE)

namespace pcnn {

class Backend {
 public:
  virtual ~Backend() = default;

  // ---- identity ---------------------------------------------------------------------------
  virtual std::string name() const = 0;           // registry name: "serial", "cuda", ...
  virtual std::string device_name() const = 0;    // e.g. "2 OpenMP threads", "NVIDIA H200"
  virtual bool is_host_memory() const = 0;        // true: device pointers are host pointers

  // ---- memory (PCNN_MEMORY_OPS above) ----------------------------------------------------
#define PCNN_PURE_MEMORY_OP(ret, op, params) virtual ret op params = 0;
  PCNN_MEMORY_OPS(PCNN_PURE_MEMORY_OP)
#undef PCNN_PURE_MEMORY_OP
  // What layers, models and data call: allocate_memory / free_memory, counted (thread-safe).
  void* allocate(size_t bytes);  // uninitialised, 256-byte aligned
  void deallocate(void* ptr);    // nullptr is a no-op
  // Bytes allocated through allocate() and not yet freed: now, and the most at any moment.
  MemoryUsage memory_usage() const { return memory_.usage(); }
  void reset_peak_memory() { memory_.reset_peak(); }
  // The whole device's memory in use (its context, other libraries' and processes' too), in
  // bytes; -1 where the backend cannot tell (host backends: their memory is the process's).
  virtual int64_t device_memory_in_use() const { return -1; }

  // ---- kernel ops (core/op_list.hpp) ------------------------------------------------------
#define PCNN_PURE_OP(op) virtual void op PCNN_OP_PARAMS_##op = 0;
  PCNN_REQUIRED_OPS(PCNN_PURE_OP)
#undef PCNN_PURE_OP
  // Fused ops: the defaults (backend_default.cpp) compose the ops above.
#define PCNN_DEFAULT_OP(op) virtual void op PCNN_OP_PARAMS_##op;
  PCNN_FUSED_OPS(PCNN_DEFAULT_OP)
#undef PCNN_DEFAULT_OP

  // The fp32 copies a composed 16-bit backward works on (backend_default_16.cpp, and the
  // layers' default 16-bit passes): x, y and dy widened into staging in that order, and dx's
  // place after them; x nullptr leaves its place unwritten (a caller that has it in fp32).
  struct Widened16 {
    float *x, *y, *dy, *dx;
  };
  Widened16 widen_for_backward_16(Precision p, size_t nx, size_t ny, const uint16_t* x,
                                  const uint16_t* y, const uint16_t* dy, float* staging);
  // Which of the fused 16-bit ops want the caller's staging (core/precision.hpp Staging16); the
  // ones that do not are passed nullptr. Every op the defaults compose wants it.
  virtual Staging16 stages_16bit() const { return {}; }
  // Whether op's 16-bit form multiplies with its fp32 operands (the weights, d(pre-activation))
  // rounded to 16 bits too, as tensor cores take them: its results then differ from the
  // composed default's within the op table's 16-bit tolerances, not bit for bit.
  virtual bool rounds_16bit_products(Op op) const {
    (void)op;
    return false;
  }

  // ---- whole-step graphs: optional ---------------------------------------------------------
  // A backend that can record the kernels launched between begin and end and replay them.
  virtual bool supports_graphs() const { return false; }
  virtual void graph_begin_capture() {}
  // True: a graph is ready to launch. False: the capture failed, the backend has ended it
  // cleanly (and said why on stderr) and the caller runs eagerly from then on. A backend that
  // cannot fall back throws instead.
  virtual bool graph_end_capture() { return true; }
  virtual void graph_launch() {}

 private:
  MemoryCounter memory_;
};

}  // namespace pcnn
