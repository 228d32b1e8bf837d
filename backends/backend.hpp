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

#include "core/op_list.hpp"

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

  // ---- memory -----------------------------------------------------------------------------
  virtual void* allocate(size_t bytes) = 0;                     // uninitialised, 256-byte aligned
  virtual void deallocate(void* ptr) = 0;                       // nullptr is a no-op
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;    // host -> device
  virtual void download(void* dst, const void* src, size_t bytes) = 0;  // device -> host (syncs)
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;      // device -> device
  virtual void fill(float* dst, float value, size_t n) = 0;            // overwrites dst[0..n)
  virtual void synchronize() = 0;                                      // all launched work done
  // *counter += 1 (device-side step counter, so a replayed graph advances by itself).
  virtual void increment(int32_t* counter) = 0;

  // ---- kernel ops (core/op_list.hpp) ------------------------------------------------------
#define PCNN_PURE_OP(op) virtual void op PCNN_OP_PARAMS_##op = 0;
  PCNN_REQUIRED_OPS(PCNN_PURE_OP)
#undef PCNN_PURE_OP
  // Fused ops: the defaults (backend_default.cpp) compose the ops above.
#define PCNN_DEFAULT_OP(op) virtual void op PCNN_OP_PARAMS_##op;
  PCNN_FUSED_OPS(PCNN_DEFAULT_OP)
#undef PCNN_DEFAULT_OP

  // ---- whole-step graphs: optional ---------------------------------------------------------
  // A backend that can record the kernels launched between begin and end and replay them.
  virtual bool supports_graphs() const { return false; }
  virtual void graph_begin_capture() {}
  virtual void graph_end_capture() {}
  virtual void graph_launch() {}
};

}  // namespace pcnn
