// The one contract between layers and backends: tensor memory, copies, and every kernel a layer,
// the loss, the optimizers or the data pipeline needs. Layers call only this class; a backend
// implements it and adds no layer logic.
//
// Conventions (every backend follows them; tests check them against `serial`):
// - Tensors are float32, NCHW, contiguous. Pointers are *device* pointers of the backend that
//   allocated them (for host backends, plain host memory). Never dereference them on the host
//   unless the backend says is_host_memory().
// - "overwrites" means the output is fully written; "accumulates" means output += result.
// - Every launch may be asynchronous: synchronize() before reading results on the host.
// - Scalars that change during training (learning rate, step counter, loss sums) live in device
//   memory, so a GPU backend can capture a whole training step once and replay it.
// - Backends may allocate scratch lazily on first use; the trainer always runs one step before it
//   asks for graph capture, so no allocation happens while capturing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/shapes.hpp"

namespace pcnn {

// What may follow a convolution inside one fused call: bias is always part of the convolution.
struct ConvEpilogue {
  Activation act = Activation::None;
  PoolKind pool = PoolKind::None;
  int pool_window = 2;
  int pool_stride = 2;
};

// Hyper-parameters the optimizer kernels read from device memory (index into a float[kHyperCount]).
enum HyperIndex { kHyperLr = 0, kHyperMomentum, kHyperWeightDecay, kHyperBeta1, kHyperBeta2,
                  kHyperEps, kHyperCount };

// Metric accumulators the loss kernel adds to (index into a float[kMetricCount]).
enum MetricIndex { kMetricLossSum = 0, kMetricCorrect, kMetricCount };

// A data set resident in device memory: images stay uint8, normalised per batch.
struct DeviceDataset {
  const uint8_t* images = nullptr;  // (count, height, width) uint8
  const int32_t* labels = nullptr;  // (count) int32 in [0, classes)
  int count = 0, height = 0, width = 0;
  float mean = 0.f, inv_std = 1.f;  // x = (pixel/255 - mean) * inv_std
};

// Where a batch goes: (batch, 1, out_h, out_w) floats; the image sits at the top-left corner and
// the rest is filled with the normalised value of a black pixel (Simard's 29x29 from 28x28).
struct BatchLayout {
  int batch = 0, out_h = 0, out_w = 0;
};

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

  // ---- dense algebra ----------------------------------------------------------------------
  // Row-major C(M,N) = alpha * op(A)(M,K) * op(B)(K,N) + beta * C. op(A)=A^T when trans_a (A is
  // then stored (K,M)). lda/ldb/ldc are row strides. beta == 0 overwrites C (NaNs in C ignored).
  virtual void gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A,
                    int lda, const float* B, int ldb, float beta, float* C, int ldc) = 0;

  // ---- convolution ------------------------------------------------------------------------
  // x (N,C,H,W), w (K,C,R,S), b (K) or nullptr -> y (N,K,P,Q); overwrites y.
  virtual void conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                              const float* b, float* y) = 0;
  // dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W); overwrites dx.
  virtual void conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                    float* dx) = 0;
  // x (N,C,H,W), dy (N,K,P,Q) -> dw (K,C,R,S) and db (K) (db may be nullptr); overwrites both.
  virtual void conv2d_backward_weights(const Conv2dShape& s, const float* x, const float* dy,
                                       float* dw, float* db) = 0;

  // ---- pooling ----------------------------------------------------------------------------
  // x (N,C,H,W) -> y (N,C,P,Q); overwrites y; P = (H - window)/stride + 1 (no padding). Max takes
  // the first maximum in row-major window order; avg divides by window^2.
  virtual void pool2d_forward(PoolKind kind, const Pool2dShape& s, const float* x, float* y) = 0;
  // x, dy (N,C,P,Q) -> dx (N,C,H,W); overwrites dx. Max routes dy to the forward's argmax,
  // recomputed from x, so no index tensor has to be kept.
  virtual void pool2d_backward(PoolKind kind, const Pool2dShape& s, const float* x,
                               const float* dy, float* dx) = 0;

  // ---- bias and activations ---------------------------------------------------------------
  // y (N,C,HW) += b (C) broadcast; accumulates into y.
  virtual void bias_add(int N, int C, int HW, const float* b, float* y) = 0;
  // dy (N,C,HW) -> db (C) = sum over N and HW; overwrites db.
  virtual void bias_backward(int N, int C, int HW, const float* dy, float* db) = 0;
  // y[i] = act(x[i]), n elements; overwrites y; x == y allowed.
  virtual void activation_forward(Activation act, size_t n, const float* x, float* y) = 0;
  // dx[i] = dy[i] * act'(from the forward *output* y[i]); overwrites dx; dy == dx allowed.
  virtual void activation_backward(Activation act, size_t n, const float* y, const float* dy,
                                   float* dx) = 0;

  // ---- loss and metrics -------------------------------------------------------------------
  // logits (N,K), labels (N) -> dlogits (N,K) = (softmax - onehot) / N (skipped if nullptr).
  // Accumulates metrics[kMetricLossSum] += sum of -log softmax[label] and
  // metrics[kMetricCorrect] += number of rows whose first arg-max equals the label.
  virtual void softmax_cross_entropy(int N, int K, const float* logits, const int32_t* labels,
                                     float* dlogits, float* metrics) = 0;

  // ---- optimizers (one call updates every parameter: parameters live in one arena) --------
  // v = momentum*v + (g + wd*p); p -= lr*v. hyper: float[kHyperCount] in device memory.
  virtual void sgd_update(size_t n, float* params, const float* grads, float* velocity,
                          const float* hyper) = 0;
  // Adam with bias correction, t = *step + 1; L2 weight decay added to the gradient.
  virtual void adam_update(size_t n, float* params, const float* grads, float* m, float* v,
                           const float* hyper, const int32_t* step) = 0;
  // *counter += 1 (device-side step counter, so a replayed graph advances by itself).
  virtual void increment(int32_t* counter) = 0;

  // ---- data pipeline ----------------------------------------------------------------------
  // Training batch number (*step % steps_per_epoch) of epoch (*step / steps_per_epoch); sample j
  // of it is shuffle_index(pos + j, data.count, epoch_seed(seed, epoch)) (core/shuffle.hpp).
  // Writes x (batch,1,out_h,out_w) and y (batch).
  virtual void gather_train_batch(const DeviceDataset& data, const int32_t* step,
                                  int steps_per_epoch, uint32_t seed, const BatchLayout& layout,
                                  float* x, int32_t* y) = 0;
  // Samples first .. first+layout.batch-1 in order (evaluation). Writes x and y.
  virtual void gather_batch(const DeviceDataset& data, int first, const BatchLayout& layout,
                            float* x, int32_t* y) = 0;

  // ---- fused kernels: optional; the defaults compose the kernels above --------------------
  // x -> act_out (N,K,P,Q) = act(conv(x,w)+b), saved for backward -> y = pool(act_out).
  // With epi.pool == None, y may equal act_out.
  virtual void conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi,
                                    const float* x, const float* w, const float* b,
                                    float* act_out, float* y);
  // From dy (gradient of y) to dw, db (overwritten) and dx (overwritten; skipped if nullptr).
  // scratch: N*K*P*Q floats the default uses for d(act_out); may equal act_out's size only.
  virtual void conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi,
                                     const float* x, const float* w, const float* act_out,
                                     const float* dy, float* scratch, float* dx, float* dw,
                                     float* db);
  // Fully connected: x (N,in), w (out,in), b (out) -> y (N,out) = act(x w^T + b); overwrites y.
  virtual void linear_forward(int N, int in, int out, Activation act, const float* x,
                              const float* w, const float* b, float* y);
  // dy (N,out) of y = act(...) -> dw (out,in), db (out) overwritten, dx (N,in) overwritten unless
  // nullptr. scratch: N*out floats for d(pre-activation) (unused when act == None).
  virtual void linear_backward(int N, int in, int out, Activation act, const float* x,
                               const float* w, const float* y, const float* dy, float* scratch,
                               float* dx, float* dw, float* db);

  // ---- whole-step graphs: optional ---------------------------------------------------------
  // A backend that can record the kernels launched between begin and end and replay them.
  virtual bool supports_graphs() const { return false; }
  virtual void graph_begin_capture() {}
  virtual void graph_end_capture() {}
  virtual void graph_launch() {}
};

}  // namespace pcnn
