// The table of op cases every backend runs (and the bench can time): odd shapes on purpose —
// non-square, stride 2 and 3, pad 0/1/2, C=1 and 3, N=1 and 5 — plus the real LeNet-5 and
// Simard layers.
#pragma once

#include <vector>

#include "backends/backend.hpp"

namespace pcnn::test {

struct ConvCase {
  const char* name;
  Conv2dShape s;  // N,C,H,W, K,R,S, stride,pad
};

inline std::vector<ConvCase> conv_cases() {
  auto make = [](int N, int C, int H, int W, int K, int R, int S, int stride, int pad) {
    Conv2dShape s;
    s.N = N; s.C = C; s.H = H; s.W = W; s.K = K; s.R = R; s.S = S; s.stride = stride; s.pad = pad;
    return s;
  };
  return {
      {"lenet5 conv1 (N5 C1 28x28 K6 5x5 pad2)", make(5, 1, 28, 28, 6, 5, 5, 1, 2)},
      {"lenet5 conv2 (N3 C6 14x14 K16 5x5)", make(3, 6, 14, 14, 16, 5, 5, 1, 0)},
      {"simard conv1 (N2 C1 29x29 K5 5x5 stride2)", make(2, 1, 29, 29, 5, 5, 5, 2, 0)},
      {"simard conv2 (N2 C5 13x13 K50 5x5 stride2)", make(2, 5, 13, 13, 50, 5, 5, 2, 0)},
      {"non-square C3 3x3 pad1 (N1 C3 7x9 K4)", make(1, 3, 7, 9, 4, 3, 3, 1, 1)},
      {"1x1 (N5 C3 5x6 K7)", make(5, 3, 5, 6, 7, 1, 1, 1, 0)},
      {"rectangular kernel 3x5 stride2 pad2 (N2 C2 9x7 K3)", make(2, 2, 9, 7, 3, 3, 5, 2, 2)},
      {"tiny (N1 C1 5x5 K1 3x3)", make(1, 1, 5, 5, 1, 3, 3, 1, 0)},
      {"stride3 pad1 (N2 C4 11x10 K5 3x3)", make(2, 4, 11, 10, 5, 3, 3, 3, 1)},
  };
}

struct PoolCase {
  const char* name;
  Pool2dShape s;  // N,C,H,W, window,stride
};

inline std::vector<PoolCase> pool_cases() {
  auto make = [](int N, int C, int H, int W, int window, int stride) {
    Pool2dShape s;
    s.N = N; s.C = C; s.H = H; s.W = W; s.window = window; s.stride = stride;
    return s;
  };
  return {
      {"lenet5 pool1 (N5 C6 28x28 2/2)", make(5, 6, 28, 28, 2, 2)},
      {"lenet5 pool2 (N3 C16 10x10 2/2)", make(3, 16, 10, 10, 2, 2)},
      {"overlapping 3/2 non-square (N2 C3 7x9)", make(2, 3, 7, 9, 3, 2)},
      {"stride1 (N1 C1 5x6 2/1)", make(1, 1, 5, 6, 2, 1)},
      {"ragged 3/3 (N2 C2 10x11)", make(2, 2, 10, 11, 3, 3)},
  };
}

struct GemmCase {
  const char* name;
  int M, N, K;
  float alpha, beta;
};

inline std::vector<GemmCase> gemm_cases() {
  return {
      {"lenet5 fc1 forward (64x120x400)", 64, 120, 400, 1.f, 0.f},
      {"lenet5 fc3 (5x10x84)", 5, 10, 84, 1.f, 0.f},
      {"ragged 7x13x5, beta 1", 7, 13, 5, 1.f, 1.f},
      {"ragged 33x17x129, alpha -0.7 beta 0.5", 33, 17, 129, -0.7f, 0.5f},
      {"wide 3x600x70", 3, 600, 70, 1.f, 0.f},
      {"deep 40x30x700", 40, 30, 700, 0.5f, 0.f},
      {"single 1x1x1", 1, 1, 1, 1.f, 0.f},
  };
}

struct FusedCase {
  const char* name;
  Conv2dShape s;
  ConvEpilogue epi;
};

inline std::vector<FusedCase> fused_cases() {
  const auto convs = conv_cases();
  auto epi = [](Activation a, PoolKind p, int window, int stride) {
    ConvEpilogue e;
    e.act = a; e.pool = p; e.pool_window = window; e.pool_stride = stride;
    return e;
  };
  return {
      {"lenet5 conv1 +relu +maxpool2", convs[0].s, epi(Activation::ReLU, PoolKind::Max, 2, 2)},
      {"lenet5 conv2 +relu +maxpool2", convs[1].s, epi(Activation::ReLU, PoolKind::Max, 2, 2)},
      {"simard conv1 +tanh", convs[2].s, epi(Activation::Tanh, PoolKind::None, 2, 2)},
      {"simard conv2 +tanh", convs[3].s, epi(Activation::Tanh, PoolKind::None, 2, 2)},
      {"non-square +sigmoid +avgpool2", convs[4].s, epi(Activation::Sigmoid, PoolKind::Avg, 2, 2)},
      {"stride3 +relu +maxpool 3/2 (ragged)", convs[8].s, epi(Activation::ReLU, PoolKind::Max, 3, 2)},
      {"1x1 plain (no epilogue)", convs[5].s, epi(Activation::None, PoolKind::None, 2, 2)},
      {"1x1 +maxpool only", convs[5].s, epi(Activation::None, PoolKind::Max, 2, 2)},
  };
}

}  // namespace pcnn::test
