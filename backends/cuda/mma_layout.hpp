// Where the operands and results of a warp's tensor-core product live, for the tiles of
// gemm_mma.cuh: mma.sync.aligned.m16n8k16 with bf16 or fp16 operands and fp32 sums. Plain index
// arithmetic (host and device), so a CPU test (tests/test_mma_layout.cpp) can check it against
// the PTX ISA's fragment tables ("Matrix Fragments for mma.m16n8k16 with floating point type").
//
// Shared memory holds each operand tile as 32-bit words, a word two consecutive k of one row of
// A (i) or one column of B (j), low half first, and each row padded to kPitch words so the eight
// rows a fragment load touches fall in different banks.
#pragma once

#include "core/host_device.hpp"

namespace pcnn::cuda::mma {

// Block tile BM x BN, K step BK = 32 (two k16 products), WM x WN warps each computing a
// (BM / WM) x (BN / WN) warp tile of MT x NT m16n8 products.
template <int BM_, int BN_, int WM_, int WN_>
struct MmaTile {
  static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_;
  static constexpr int BK = 32, kWordsK = BK / 2, kPitch = kWordsK + 4;
  static constexpr int kThreads = 32 * WM * WN;
  static constexpr int WTM = BM / WM, WTN = BN / WN, MT = WTM / 16, NT = WTN / 8;
  static constexpr int kAWpT = BM * kWordsK / kThreads;  // A words each thread fetches a step
  static constexpr int kBWpT = BN * kWordsK / kThreads;
  static constexpr int kSmemWords = (BM + BN) * kPitch;
  static_assert(WTM % 16 == 0 && WTN % 8 == 0, "warp tiles of whole m16n8 products");
  static_assert(BM * kWordsK % kThreads == 0 && BN * kWordsK % kThreads == 0, "loads must divide");
};

// Word w of a K step's A tile as the threads fetch it (thread t: words t, t + threads, ...):
// its row and k pair. Along k when A's k is contiguous in memory, else along the rows, so
// neighbouring threads read neighbouring addresses.
PCNN_HD inline void a_word_coord(bool contig_k, int BM, int w, int& row, int& kp) {
  constexpr int kWordsK = 16;
  if (contig_k) {
    row = w / kWordsK;
    kp = w % kWordsK;
  } else {
    row = w % BM;
    kp = w / BM;
  }
}
// The same for B: its column and k pair.
PCNN_HD inline void b_word_coord(bool contig_j, int BN, int w, int& col, int& kp) {
  constexpr int kWordsK = 16;
  if (contig_j) {
    col = w % BN;
    kp = w / BN;
  } else {
    col = w / kWordsK;
    kp = w % kWordsK;
  }
}

// The shared-memory word of register r (0..3) of lane's A fragment, for the m16 product whose
// first row is row0 and the k16 half ks (0, 1) of the step: rows g and g + 8, k pairs t and
// t + 4 of the half (g = lane / 4, t = lane % 4).
PCNN_HD inline int a_frag_word(int pitch, int row0, int ks, int lane, int r) {
  const int g = lane >> 2, t = lane & 3;
  return (row0 + g + 8 * (r & 1)) * pitch + ks * 8 + t + 4 * (r >> 1);
}
// Register r (0, 1) of lane's B fragment, for the n8 product whose first column is col0.
PCNN_HD inline int b_frag_word(int pitch, int col0, int ks, int lane, int r) {
  const int g = lane >> 2, t = lane & 3;
  return (col0 + g) * pitch + ks * 8 + t + 4 * r;
}
// Accumulator c (0..3) of lane in an m16n8 product: its row and column in that product.
PCNN_HD inline void c_frag_coord(int lane, int c, int& row, int& col) {
  row = (lane >> 2) + 8 * (c >> 1);
  col = 2 * (lane & 3) + (c & 1);
}

}  // namespace pcnn::cuda::mma
