// The fused linear layer as problems of the tile engines: how each reads its operands and
// writes its results (fp32 or 16-bit storage), the bias and activation in the forward's epilogue,
// the activation's derivative folded into the backward's loads. The activation is a template
// argument, picked once per launch (dispatch_activation), so a new activation needs no edit here.
// Used by gemm.cu (fp32) and linear_16.cu (16 bits).
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "core/activation_math.hpp"
#include "core/precision.hpp"

namespace pcnn::cuda {

namespace {

// How a dense problem reads and writes the activations and their gradients: fp32 as they are,
// or 16-bit storage widened as a tile loads it and rounded as the epilogue stores it
// (core/precision.hpp). The tiles, the sums, the weights and the weight gradients stay fp32,
// so a 16-bit problem computes the bits the composed default gives (widen, fp32 op, round)
// without its three conversion launches and staging copies.
struct F32Store {
  using T = float;
  __device__ float value(float raw) const { return raw; }
  __device__ float load(const float* p, size_t i) const { return p[i]; }
  __device__ void store(float* p, size_t i, float v) const { p[i] = v; }
};
struct Bits16Store {
  using T = uint16_t;
  Precision prec;
  __device__ float value(uint16_t raw) const { return widen_from_storage(prec, raw); }
  __device__ float load(const uint16_t* p, size_t i) const { return value(p[i]); }
  __device__ void store(uint16_t* p, size_t i, float v) const {
    p[i] = round_to_storage(prec, v);
  }
};

// y (N,out) = act(x (N,in) w^T + b): A = x, B = w^T; Act fixed at compile time (a switch per
// stored or loaded element is what the five-activation table would otherwise cost).
template <Activation Act, class S = F32Store>
struct LinearForwardProblem {
  int M, N, K;  // batch, out, in
  const typename S::T* x;
  const float* w;
  const float* bias;
  typename S::T* y;
  S io;
  static constexpr bool kAContigK = true;
  static constexpr bool kBContigJ = false;
  __device__ float a(int i, int k) const { return io.load(x, size_t(i) * K + k); }
  __device__ float b(int k, int j) const { return w[size_t(j) * K + k]; }
  // The tile loop's split reads (gemm_tile.cuh SplitsReads), where a read has arithmetic: the
  // widening of 16 bits (fp32 reads are loads alone).
  static constexpr bool kSplitReads = !std::is_same_v<S, F32Store>;
  using RawA = typename S::T;
  using RawB = float;
  __device__ RawA a_raw(int i, int k) const { return x[size_t(i) * K + k]; }
  __device__ float a_of(RawA r, int, int) const { return io.value(r); }
  __device__ float b_raw(int k, int j) const { return b(k, j); }
  __device__ float b_of(float r, int, int) const { return r; }
  __device__ void store(int i, int j, float acc) const {
    io.store(y, size_t(i) * N + j, activate<Act>(acc + (bias ? bias[j] : 0.f)));
  }
};

// d(pre-activation) (batch,out) = dy * act'(y), read where the products need it
template <Activation Act, class S = F32Store>
struct PreActGrad {
  const typename S::T* dy;
  const typename S::T* y;
  int out;
  S io;
  __device__ float at(int n, int o) const {
    const size_t i = size_t(n) * out + o;
    if constexpr (Act == Activation::None) return io.load(dy, i);
    else return io.load(dy, i) * activation_derivative<Act>(io.load(y, i));
  }
  // at() in two halves: the loads (y unread without an activation), then the arithmetic, which
  // an fp32 read without an activation has none of.
  static constexpr bool kArithmetic = Act != Activation::None || !std::is_same_v<S, F32Store>;
  struct Raw {
    typename S::T dy, y;
  };
  __device__ Raw raw(int n, int o) const {
    const size_t i = size_t(n) * out + o;
    if constexpr (Act == Activation::None) return Raw{dy[i], {}};
    else return Raw{dy[i], y[i]};
  }
  __device__ float of(const Raw& r) const {
    if constexpr (Act == Activation::None) return io.value(r.dy);
    else return io.value(r.dy) * activation_derivative<Act>(io.value(r.y));
  }
};

// [dw | db] (out, in+1) = d^T (out,batch) [x | 1] (batch, in+1): the bias gradient is the
// product with a column of ones, so it costs no extra pass over d.
template <Activation Act, class S = F32Store>
struct LinearWeightGradProblem {
  int M, N, K;  // out, in (+1 when db is wanted), batch
  int in;
  PreActGrad<Act, S> d;
  const typename S::T* x;
  float* dw;
  float* db;
  static constexpr bool kAContigK = false;  // d (batch,out): i = o runs along memory
  static constexpr bool kBContigJ = true;
  __device__ float a(int i, int k) const { return d.at(k, i); }
  __device__ float b(int k, int j) const {
    return j < in ? d.io.load(x, size_t(k) * in + j) : 1.f;
  }
  static constexpr bool kSplitReads = PreActGrad<Act, S>::kArithmetic;
  using RawA = typename PreActGrad<Act, S>::Raw;
  using RawB = typename S::T;
  __device__ RawA a_raw(int i, int k) const { return d.raw(k, i); }
  __device__ float a_of(const RawA& r, int, int) const { return d.of(r); }
  __device__ RawB b_raw(int k, int j) const { return j < in ? x[size_t(k) * in + j] : RawB{}; }
  __device__ float b_of(RawB r, int, int j) const { return j < in ? d.io.value(r) : 1.f; }
  __device__ void store(int i, int j, float acc) const {
    if (j < in) dw[size_t(i) * in + j] = acc;
    else db[i] = acc;
  }
};

// dx (batch,in) = d (batch,out) w (out,in)
template <Activation Act, class S = F32Store>
struct LinearDataGradProblem {
  int M, N, K;  // batch, in, out
  PreActGrad<Act, S> d;
  const float* w;
  typename S::T* dx;
  static constexpr bool kAContigK = true;
  static constexpr bool kBContigJ = true;
  __device__ float a(int i, int k) const { return d.at(i, k); }
  __device__ float b(int k, int j) const { return w[size_t(k) * N + j]; }
  static constexpr bool kSplitReads = PreActGrad<Act, S>::kArithmetic;
  using RawA = typename PreActGrad<Act, S>::Raw;
  using RawB = float;
  __device__ RawA a_raw(int i, int k) const { return d.raw(i, k); }
  __device__ float a_of(const RawA& r, int, int) const { return d.of(r); }
  __device__ float b_raw(int k, int j) const { return b(k, j); }
  __device__ float b_of(float r, int, int) const { return r; }
  __device__ void store(int i, int j, float acc) const {
    d.io.store(dx, size_t(i) * N + j, acc);
  }
};

// Both storages through one body: S is F32Store or Bits16Store; run(p0, p1) launches one
// problem (p1 nullptr) or two (the backward's dw and dx) on the tiles the caller chooses.
template <class S, class Run>
void linear_forward_as(S io, int N, int in, int out, Activation act,
                       const typename S::T* x, const float* w, const float* b, typename S::T* y,
                       Run run) {
  if (N <= 0 || out <= 0) return;
  dispatch_activation(act, [&](auto tag) {
    using Problem = LinearForwardProblem<decltype(tag)::value, S>;
    const Problem p{N, out, in, x, w, b, y, io};
    run(p, static_cast<const Problem*>(nullptr));
  });
}

template <class S, class Run>
void linear_backward_as(S io, int N, int in, int out, Activation act,
                        const typename S::T* x, const float* w, const typename S::T* y,
                        const typename S::T* dy, typename S::T* dx, float* dw, float* db,
                        Run run) {
  if (out <= 0) return;
  dispatch_activation(act, [&](auto tag) {
    constexpr Activation A = decltype(tag)::value;
    const PreActGrad<A, S> d{dy, y, out, io};
    const LinearWeightGradProblem<A, S> pw{out, in + (db ? 1 : 0), N, in, d, x, dw, db};
    const LinearDataGradProblem<A, S> px{N, in, out, d, w, dx};
    run(pw, dx ? &px : nullptr);
  });
}

}  // namespace

}  // namespace pcnn::cuda
