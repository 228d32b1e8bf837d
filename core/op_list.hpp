// The kernel ops of the backend contract, each declared once: its parameters (PCNN_OP_PARAMS_<op>)
// and what it computes. backends/backend.hpp turns the lists into virtual methods; a backend
// declares the ops it defines with PCNN_OVERRIDE(op) and defines each one in its op files
// (`grep -rn conv2d_backward_data backends/` lands on every definition); the op-case table of the
// tests checks that every op has cases (tests/op_table.cpp).
//
// Conventions (every backend follows them; tests check them against `serial`):
// - Tensors are float32 (the 16-bit storage ops aside), NCHW, contiguous, in the backend's memory.
// - "overwrites" means the output is fully written; "accumulates" means output += result.
// - Inputs and outputs do not alias unless a row says so. N == 0 is never passed.
// - Every op may run asynchronously and may be recorded into a graph: no op allocates after the
//   first call with the same shapes, and none reads device memory back to the host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/augment_config.hpp"
#include "core/contract_types.hpp"
#include "core/precision.hpp"
#include "core/shapes.hpp"

// ---- dense algebra -------------------------------------------------------------------------
// Row-major C(M,N) = alpha * op(A)(M,K) * op(B)(K,N) + beta * C. op(A)=A^T when trans_a (A is
// then stored (K,M)). lda/ldb/ldc are row strides. beta == 0 overwrites C (NaNs in C ignored).
#define PCNN_OP_PARAMS_gemm                                                                   \
  (bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,     \
   const float* B, int ldb, float beta, float* C, int ldc)

// ---- convolution ---------------------------------------------------------------------------
// x (N,C,H,W), w (K,C,R,S), b (K) or nullptr -> y (N,K,P,Q); overwrites y.
#define PCNN_OP_PARAMS_conv2d_forward \
  (const Conv2dShape& s, const float* x, const float* w, const float* b, float* y)
// dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W); overwrites dx.
#define PCNN_OP_PARAMS_conv2d_backward_data \
  (const Conv2dShape& s, const float* dy, const float* w, float* dx)
// x (N,C,H,W), dy (N,K,P,Q) -> dw (K,C,R,S) and db (K) (db may be nullptr); overwrites both.
#define PCNN_OP_PARAMS_conv2d_backward_weights \
  (const Conv2dShape& s, const float* x, const float* dy, float* dw, float* db)

// ---- pooling -------------------------------------------------------------------------------
// x (N,C,H,W) -> y (N,C,P,Q); overwrites y; P = (H + 2*pad - window)/stride + 1, pad < window.
// A window covers its in-image elements only (core/pool_math.hpp): max takes the first maximum
// of them in row-major window order; avg divides by their count (window^2 without padding).
// argmax (N,C,P,Q) or nullptr: max pooling overwrites it with pool_argmax_byte of each output
// (window <= kMaxArgmaxWindow); never written by avg.
#define PCNN_OP_PARAMS_pool2d_forward \
  (PoolKind kind, const Pool2dShape& s, const float* x, float* y, uint8_t* argmax)
// x, dy (N,C,P,Q) -> dx (N,C,H,W); overwrites dx. Max routes dy to the forward's argmax,
// recomputed from x (the standalone pooling layer keeps no indices: x is kept anyway); avg
// never reads x.
#define PCNN_OP_PARAMS_pool2d_backward \
  (PoolKind kind, const Pool2dShape& s, const float* x, const float* dy, float* dx)
// Max pooling's backward from its kept indices, through the activation before it: each output's
// dy * act'(y) (y (N,C,P,Q) the pooled output, act None: dy) reaches the pixel its argmax byte
// names; dx (N,C,H,W) overwritten, a pixel summing the windows that name it
// (pool_gather_argmax_grad). What a fused convolution's backward needs instead of the pre-pool
// activations.
#define PCNN_OP_PARAMS_max_pool_backward_argmax                                                  \
  (const Pool2dShape& s, Activation act, const uint8_t* argmax, const float* y, const float* dy, \
   float* dx)

// ---- bias and activations ------------------------------------------------------------------
// y (N,C,HW) += b (C) broadcast; accumulates into y.
#define PCNN_OP_PARAMS_bias_add (int N, int C, int HW, const float* b, float* y)
// dy (N,C,HW) -> db (C) = sum over N and HW; overwrites db.
#define PCNN_OP_PARAMS_bias_backward (int N, int C, int HW, const float* dy, float* db)
// y[i] = act(x[i]), n elements; overwrites y; x == y allowed.
#define PCNN_OP_PARAMS_activation_forward (Activation act, size_t n, const float* x, float* y)
// dx[i] = dy[i] * act'(from the forward *output* y[i]); overwrites dx; dy == dx allowed.
#define PCNN_OP_PARAMS_activation_backward \
  (Activation act, size_t n, const float* y, const float* dy, float* dx)

// ---- batch normalisation (core/batchnorm_math.hpp) ----------------------------------------
// Per channel c over the M = N*HW values of x (N,C,HW): mean and biased variance var; inv_std =
// 1/sqrt(var + eps); y (N,C,HW) = act(gamma*(x - mean)*inv_std + beta), overwritten (act ==
// None: the normalised value itself). Overwrites save_mean, save_inv_std (C) for the backward;
// running_mean, running_var (C) are updated in place: r = (1 - momentum)*r + momentum*batch, the
// variance unbiased (var*M/(M-1); M == 1 keeps var). Each channel's sums in an order fixed by the
// shapes (deterministic).
#define PCNN_OP_PARAMS_batchnorm_forward_train                                                  \
  (int N, int C, int HW, Activation act, float eps, float momentum, const float* x,             \
   const float* gamma, const float* beta, float* y, float* save_mean, float* save_inv_std,      \
   float* running_mean, float* running_var)
// y (N,C,HW) = act(gamma*(x - running_mean)/sqrt(running_var + eps) + beta); overwrites y.
#define PCNN_OP_PARAMS_batchnorm_forward_infer                                              \
  (int N, int C, int HW, Activation act, float eps, const float* x, const float* gamma,    \
   const float* beta, const float* running_mean, const float* running_var, float* y)
// From dy (N,C,HW), the gradient of the training forward's output y (read only when act !=
// None: g = dy * act'(y), the derivative from the output; g = dy for None), and that forward's
// x, save_mean, save_inv_std: dgamma (C) = sum(g*xhat), dbeta (C) = sum(g), overwritten; dx
// (N,C,HW) overwritten unless nullptr.
#define PCNN_OP_PARAMS_batchnorm_backward                                                     \
  (int N, int C, int HW, Activation act, const float* x, const float* y, const float* dy,     \
   const float* gamma, const float* save_mean, const float* save_inv_std, float* dx,          \
   float* dgamma, float* dbeta)

// ---- regularisation and global pooling ------------------------------------------------------
// Inverted dropout of n elements: y[i] = x[i] / (1 - rate) where kept, 0 where dropped; the
// decision is dropout_keep(dropout_key(seed, salt, *step), i, dropout_threshold(rate))
// (core/dropout_math.hpp), bit-identical on every backend. rate in [0, 1). Overwrites y; x == y
// allowed.
#define PCNN_OP_PARAMS_dropout_forward                                                   \
  (size_t n, float rate, uint32_t seed, uint32_t salt, const int32_t* step, const float* x, \
   float* y)
// The same mask (drawn again, none is kept) on the gradient: dx[i] = dy[i] / (1 - rate) or 0.
// Overwrites dx; dy == dx allowed.
#define PCNN_OP_PARAMS_dropout_backward                                                   \
  (size_t n, float rate, uint32_t seed, uint32_t salt, const int32_t* step, const float* dy, \
   float* dx)
// x (N,C,HW) -> y (N,C) = the mean of each plane (the sum times 1/HW); overwrites y.
#define PCNN_OP_PARAMS_global_avg_pool_forward (int N, int C, int HW, const float* x, float* y)
// dy (N,C) -> dx (N,C,HW) = dy * (1/HW), broadcast over each plane; overwrites dx.
#define PCNN_OP_PARAMS_global_avg_pool_backward (int N, int C, int HW, const float* dy, float* dx)

// ---- loss and metrics ----------------------------------------------------------------------
// logits (N,K), labels (N) -> dlogits (N,K) = (softmax - onehot) / N (skipped if nullptr).
// Accumulates metrics[kMetricLossSum] += sum of -log softmax[label] and
// metrics[kMetricCorrect] += number of rows whose first arg-max equals the label.
#define PCNN_OP_PARAMS_softmax_cross_entropy \
  (int N, int K, const float* logits, const int32_t* labels, float* dlogits, float* metrics)

// ---- 16-bit storage (core/precision.hpp; p is BF16 or F16) -----------------------------------
// y[i] = round_to_storage(p, x[i] * *scale), or of x[i] when scale is nullptr (scale: device
// memory, the loss scale); n elements, overwrites y.
#define PCNN_OP_PARAMS_round_to_16bit \
  (Precision p, size_t n, const float* x, const float* scale, uint16_t* y)
// y[i] = widen_from_storage(p, x[i]), exact; n elements, overwrites y.
#define PCNN_OP_PARAMS_widen_16bit (Precision p, size_t n, const uint16_t* x, float* y)

// ---- numerical faults ----------------------------------------------------------------------
// After the backward (and the all-reduce): checks grads (n) and metrics[kMetricStepLoss]. All
// finite: metrics[kMetricLossSum, kMetricCorrect] += the step slots, hyper[kHyperSkip] = 0.
// Otherwise hyper[kHyperSkip] = 1, metrics[kMetricBadSteps] += 1, and when no fault is recorded
// yet, FirstBadStep = *step + 1 and FirstBadGrad = 1 + the lowest non-finite index (0 when
// only the loss is not finite), each packed as two floats (core/step_check_math.hpp). Then
// the step slots are zeroed. Before all that, the loss scale slots of hyper move
// (update_loss_scale: GradUnscale = 1/LossScale, then a dynamic scale halves or grows). Reads nothing back to the host: the update learns the verdict
// from hyper, on the device.
#define PCNN_OP_PARAMS_check_step \
  (size_t n, const float* grads, const int32_t* step, float* metrics, float* hyper)

// ---- optimizers (one call updates every parameter: parameters live in one arena) -----------
// Both leave params and their state untouched when hyper[kHyperSkip] != 0 (each thread reads
// it once): a step check_step found faulty is not applied. Each gradient is first multiplied
// by hyper[kHyperGradUnscale] (1 unless a loss scale is in use).
// v = momentum*v + (g + wd*p); p -= lr*v. hyper: float[kHyperCount] in device memory.
#define PCNN_OP_PARAMS_sgd_update \
  (size_t n, float* params, const float* grads, float* velocity, const float* hyper)
// Adam with bias correction, t = *step + 1; L2 weight decay added to the gradient.
#define PCNN_OP_PARAMS_adam_update                                                       \
  (size_t n, float* params, const float* grads, float* m, float* v, const float* hyper, \
   const int32_t* step)

// ---- data pipeline -------------------------------------------------------------------------
// Training batch number (*step % steps_per_epoch) of epoch (*step / steps_per_epoch); sample j
// of it is shuffle_index(pos + j, data.count, epoch_seed(seed, epoch)) (core/shuffle.hpp).
// Writes x (batch,C,out_h,out_w), C = data.channels, and y (batch).
#define PCNN_OP_PARAMS_gather_train_batch                                                 \
  (const DeviceDataset& data, const int32_t* step, int steps_per_epoch, uint32_t seed, \
   const BatchLayout& layout, float* x, int32_t* y)
// Samples first .. first+layout.batch-1 in order (evaluation). Writes x and y.
#define PCNN_OP_PARAMS_gather_batch \
  (const DeviceDataset& data, int first, const BatchLayout& layout, float* x, int32_t* y)

// ---- data augmentation (core/augment_math.hpp) ---------------------------------------------
// x (N,C,H,W), a gathered training batch -> y (N,C,H,W), overwritten: image j resampled once
// (bilinear; a tap outside the image reads fill[c], C floats: a black pixel's value) at the
// source coordinates of augment_source, its parameters drawn from augment_image_key(seed,
// *step, N, j); the channels of an image share them. With elastic, scratch (N *
// kElasticScratchPlanes * H * W floats) holds the noise and its row-smoothed planes (the taps:
// elastic_taps(a.elastic_sigma)); untouched otherwise. Backends agree within libm's sinf/cosf.
#define PCNN_OP_PARAMS_augment_batch                                                          \
  (const AugmentConfig& a, const int32_t* step, uint32_t seed, int N, int C, int H, int W,   \
   const float* fill, const float* x, float* scratch, float* y)

// ---- fused ops: optional; backends/backend_default.cpp composes them from the ops above -----
// x -> y = pool(act(conv(x,w)+b)), or act(conv(x,w)+b) when epi.pool == None; overwrites y,
// and kept (core/shapes.hpp ConvKept: max pooling's argmax bytes as pool2d_forward writes them,
// or avg pooling's pre-pool act_out). scratch: N*K*P*Q floats, transient (a backend that
// materialises the pre-pool output puts it there; the composed default does).
#define PCNN_OP_PARAMS_conv2d_fused_forward                                                       \
  (const Conv2dShape& s, const ConvEpilogue& epi, const float* x, const float* w, const float* b, \
   const ConvKept& kept, float* scratch, float* y)
// From dy (gradient of y), y and kept as the forward left them, to dw, db (overwritten) and dx
// (overwritten; skipped if nullptr). scratch: N*K*P*Q floats, transient (the default puts
// d(pre-activation) there).
#define PCNN_OP_PARAMS_conv2d_fused_backward                                                    \
  (const Conv2dShape& s, const ConvEpilogue& epi, const float* x, const float* w,               \
   const ConvKept& kept, const float* y, const float* dy, float* scratch, float* dx, float* dw, \
   float* db)
// Fully connected: x (N,in), w (out,in), b (out) -> y (N,out) = act(x w^T + b); overwrites y.
#define PCNN_OP_PARAMS_linear_forward                                                    \
  (int N, int in, int out, Activation act, const float* x, const float* w, const float* b, \
   float* y)
// dy (N,out) of y = act(...) -> dw (out,in), db (out) overwritten, dx (N,in) overwritten unless
// nullptr. scratch: N*out floats for d(pre-activation) (unused when act == None).
#define PCNN_OP_PARAMS_linear_backward                                                       \
  (int N, int in, int out, Activation act, const float* x, const float* w, const float* y, \
   const float* dy, float* scratch, float* dx, float* dw, float* db)

// ---- the fused ops on 16-bit activations (core/precision.hpp; p is BF16 or F16) -------------
// The same as the four above, with x, y, dy and dx stored in 16 bits; weights, biases, their
// gradients, scratch and every sum stay fp32: y16 = round(op(widen(x16), w, b)), and a
// backward's dx16 = round(its fp32 dx from the widened x, y and dy). staging: floats for the
// defaults, which widen into it and run the fp32 op: x_size + y_size forward, twice that
// backward (y: the fused, pooled output); a backend with native 16-bit kernels ignores it.
// Such a kernel may also round w to the same precision for its products (tensor cores take
// 16-bit operands; the sums stay fp32): the op table's 16-bit tolerances allow for that. The
// convolutions take their input either in 16 bits (x) or in fp32 (x32, x then nullptr): a
// model's first layer reads the data as given, with no rounding launch before it and fp32
// loads in its kernels; y, dy and dx are 16-bit either way.
#define PCNN_OP_PARAMS_conv2d_fused_forward_16                                                \
  (Precision p, const Conv2dShape& s, const ConvEpilogue& epi, const uint16_t* x,              \
   const float* x32, const float* w, const float* b, const ConvKept& kept, float* scratch,     \
   float* staging, uint16_t* y)
#define PCNN_OP_PARAMS_conv2d_fused_backward_16                                               \
  (Precision p, const Conv2dShape& s, const ConvEpilogue& epi, const uint16_t* x,              \
   const float* x32, const float* w, const ConvKept& kept, const uint16_t* y,                 \
   const uint16_t* dy, float* scratch, float* staging, uint16_t* dx, float* dw, float* db)
#define PCNN_OP_PARAMS_linear_forward_16                                                      \
  (Precision p, int N, int in, int out, Activation act, const uint16_t* x, const float* w,     \
   const float* b, float* staging, uint16_t* y)
#define PCNN_OP_PARAMS_linear_backward_16                                                     \
  (Precision p, int N, int in, int out, Activation act, const uint16_t* x, const float* w,     \
   const uint16_t* y, const uint16_t* dy, float* scratch, float* staging, uint16_t* dx,         \
   float* dw, float* db)

// The loss on 16-bit logits (N,K): the same as softmax_cross_entropy on widen(logits), with its
// gradient stored in 16 bits, dlogits = round(grad * *scale) (scale: device memory, the loss
// scale; 1 when nullptr; dlogits skipped if nullptr), and the widened logits in logits32 unless
// nullptr. staging: N * K floats for the default (widen, the fp32 op, round: its fp32 gradient),
// 2 * N * K when logits32 is nullptr (the widened logits too); a backend with a native kernel
// ignores it. One launch instead of three in a 16-bit training step.
#define PCNN_OP_PARAMS_softmax_cross_entropy_16                                             \
  (Precision p, int N, int K, const uint16_t* logits, const int32_t* labels,               \
   const float* scale, float* staging, float* logits32, uint16_t* dlogits, float* metrics)

// Every backend defines these.
// clang-format off
#define PCNN_REQUIRED_OPS(X)                                                                 \
  X(gemm) X(conv2d_forward) X(conv2d_backward_data) X(conv2d_backward_weights)               \
  X(pool2d_forward) X(pool2d_backward) X(max_pool_backward_argmax) X(bias_add)               \
  X(bias_backward) X(activation_forward) X(activation_backward) X(softmax_cross_entropy)    \
  X(check_step) X(sgd_update) X(adam_update) X(gather_train_batch) X(gather_batch)           \
  X(augment_batch) X(batchnorm_forward_train) X(batchnorm_forward_infer)                     \
  X(batchnorm_backward) X(dropout_forward) X(dropout_backward) X(global_avg_pool_forward)    \
  X(global_avg_pool_backward) X(round_to_16bit) X(widen_16bit)
// clang-format on

// A backend may define these; otherwise the composed defaults run (backend_default.cpp, and
// backend_default_16.cpp for the 16-bit forms).
#define PCNN_FUSED_OPS(X)                                                                  \
  X(conv2d_fused_forward) X(conv2d_fused_backward) X(linear_forward) X(linear_backward)    \
  X(conv2d_fused_forward_16) X(conv2d_fused_backward_16) X(linear_forward_16)              \
  X(linear_backward_16) X(softmax_cross_entropy_16)

#define PCNN_ALL_OPS(X) PCNN_REQUIRED_OPS(X) PCNN_FUSED_OPS(X)

namespace pcnn {

// The ops as values, for the op-case table, the perf table and reports.
enum class Op {
#define PCNN_OP_ENUM_ROW(op) op,
  PCNN_ALL_OPS(PCNN_OP_ENUM_ROW)
#undef PCNN_OP_ENUM_ROW
};

inline const char* op_name(Op op) {
  static constexpr const char* kNames[] = {
#define PCNN_OP_NAME_ROW(op) #op,
      PCNN_ALL_OPS(PCNN_OP_NAME_ROW)
#undef PCNN_OP_NAME_ROW
  };
  return kNames[int(op)];
}

inline constexpr int kOpCount = 0
#define PCNN_OP_COUNT_ROW(op) +1
    PCNN_ALL_OPS(PCNN_OP_COUNT_ROW)
#undef PCNN_OP_COUNT_ROW
    ;

}  // namespace pcnn
