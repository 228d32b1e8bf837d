// Where the tensor-core convolution forward (conv2d_forward_mma.cuh) finds its operands: the
// convolution as an implicit GEMM, rows = output positions of one image, columns = output
// channels, k = filter taps (c, r, s), A gathered from the zero-padded image in shared memory and
// B from the filters packed as mma_layout.hpp packs a B tile. Plain index arithmetic (host and
// device), so a CPU test (tests/test_conv_mma_layout.cpp) can run a whole block's products
// through it, as the PTX fragment tables place them, against a plain convolution.
//
// Rows under a fused 2 x 2 pool are ordered window by window, the four corners of a window in
// consecutive rows: the corners then sit in the accumulators of four lanes that differ only in
// bits 2 and 3 of the lane index (groupID's low bits), and a window is pooled by three shuffles.
#pragma once

#include <cstdint>

#include "backends/cuda/mma_layout.hpp"
#include "core/host_device.hpp"
#include "core/shapes.hpp"

namespace pcnn::cuda::mma {

// Shared-memory layout of one block: its filters (kt output channels) as B words, [kt][pitch],
// the tap offsets [kpad] (ints), the biases [kt] (floats), then the padded image as 16-bit words,
// [C + 1][Hp][Wp], the last plane zeros: the taps past C*R*S (k padded to 16) point into it, so
// the rows gather zeros there whatever their position.
struct ConvMmaLayout {
  int C, Hp, Wp, taps, kpad, words_k, pitch, kt;
  int w_words, tap_words, bias_words, image_halves, bytes;
  PCNN_HD ConvMmaLayout(const Conv2dShape& s, int kt_) : kt(kt_) {
    C = s.C;
    Hp = s.H + 2 * s.pad;
    Wp = s.W + 2 * s.pad;
    taps = s.C * s.R * s.S;
    kpad = (taps + 15) / 16 * 16;
    words_k = kpad / 2;
    pitch = words_k + 4;  // = 4 mod 8: the eight columns of a B fragment in different banks
    w_words = kt * pitch;
    tap_words = kpad;
    bias_words = kt;
    image_halves = (s.C + 1) * Hp * Wp;
    bytes = 4 * (w_words + tap_words + bias_words) + 2 * image_halves;
  }
  // Where the zero plane starts (tap offsets past the filter point here).
  PCNN_HD int zero_plane() const { return C * Hp * Wp; }
};

// The offset in the padded image of filter tap k (k < kpad) from its output position's corner.
PCNN_HD inline int tap_offset(const Conv2dShape& s, const ConvMmaLayout& L, int k) {
  if (k >= L.taps) return L.zero_plane();
  const int c = k / (s.R * s.S), r = (k / s.S) % s.R, t = k % s.S;
  return (c * L.Hp + r) * L.Wp + t;
}

// Output rows of one image: pw == 2 window by window (4 rows a window), pw == 1 row-major.
PCNN_HD inline int mma_rows(const Conv2dShape& s, int pw) {
  return pw == 2 ? (s.P() / 2) * (s.Q() / 2) * 4 : s.P() * s.Q();
}
// Row m's output position (p, q).
PCNN_HD inline void row_position(const Conv2dShape& s, int pw, int m, int& p, int& q) {
  if (pw == 2) {
    const int window = m >> 2, corner = m & 3, Q2 = s.Q() / 2;
    p = (window / Q2) * 2 + (corner >> 1);
    q = (window % Q2) * 2 + (corner & 1);
  } else {
    p = m / s.Q();
    q = m % s.Q();
  }
}
// Row m's top-left input element in the padded image; rows past the image's (a partly filled last
// tile) read from the corner: any finite values, their results are never stored.
PCNN_HD inline int row_base(const Conv2dShape& s, const ConvMmaLayout& L, int pw, int m) {
  if (m >= mma_rows(s, pw)) return 0;
  int p, q;
  row_position(s, pw, m, p, q);
  return p * s.stride * L.Wp + q * s.stride;
}

// Register r (0..3) of lane's A fragment for the k16 step ks: its row in the m16 product (0..15)
// and its two taps, low half first (the PTX table: rows g, g + 8, taps 2t, 2t + 1, + 8).
PCNN_HD inline void a_frag_taps(int ks, int lane, int r, int& row, int& tap) {
  const int g = lane >> 2, t = lane & 3;
  row = g + 8 * (r & 1);
  tap = 16 * ks + 2 * t + 8 * (r >> 1);
}

// A window's four corners (row-major, corner = i * 2 + j) pooled as every other kernel pools
// (core/pool_math.hpp): max takes the first maximum (comparisons with NaN are false, so a NaN
// after the first corner never wins) and gives its corner, the argmax byte; avg sums in corner
// order, then divides.
PCNN_HD inline float pool_corners(bool is_max, const float (&v)[4], int& best) {
  best = 0;
  if (!is_max) return (((0.f + v[0]) + v[1]) + v[2] + v[3]) * 0.25f;
  float acc = v[0];
  for (int i = 1; i < 4; ++i)
    if (v[i] > acc) {
      acc = v[i];
      best = i;
    }
  return acc;
}

// Lane's A fragment for the k16 step ks, its rows g and g + 8 at image offsets lo and hi (row_base)
// in the staged image xs, through the tap offsets.
PCNN_HD inline void gather_a(const uint16_t* xs, const int* taps, int lo, int hi, int ks, int lane,
                             uint32_t (&a)[4]) {
  int row, tap_lo, tap_hi;
  a_frag_taps(ks, lane, 0, row, tap_lo);  // registers 0, 1: taps 2t, 2t + 1
  a_frag_taps(ks, lane, 2, row, tap_hi);  // registers 2, 3: the same + 8
  const int o0 = taps[tap_lo], o1 = taps[tap_lo + 1], o2 = taps[tap_hi], o3 = taps[tap_hi + 1];
  const auto pair = [&](int base, int first, int second) {
    return uint32_t(xs[base + first]) | (uint32_t(xs[base + second]) << 16);
  };
  a[0] = pair(lo, o0, o1);
  a[1] = pair(hi, o0, o1);
  a[2] = pair(lo, o2, o3);
  a[3] = pair(hi, o2, o3);
}

// The data gradient of a unit-stride convolution with square filters is a forward convolution
// (what the data-gradient kernel of conv2d_backward_mma.cu runs through this layout): dx (N,C,H,W)
// = d(pre-activation) (N,K,P,Q) padded by R - 1 - pad, convolved with the filters transposed
// and flipped, w'(c, k, r, t) = w(k, c, R - 1 - r, S - 1 - t).
PCNN_HD inline bool dx_as_forward_ok(const Conv2dShape& s) {
  return s.stride == 1 && s.R == s.S && s.pad <= s.R - 1;
}
PCNN_HD inline Conv2dShape dx_as_forward(const Conv2dShape& s) {
  Conv2dShape t = s;
  t.C = s.K;
  t.H = s.P();
  t.W = s.Q();
  t.K = s.C;
  t.pad = s.R - 1 - s.pad;
  return t;
}
// Where w'(c, k, r, t) is in w (K,C,R,S).
PCNN_HD inline int flipped_filter_index(const Conv2dShape& s, int c, int k, int r, int t) {
  return ((k * s.C + c) * s.R + s.R - 1 - r) * s.S + s.S - 1 - t;
}

// The lanes holding the other corners of a window: lane ^ (4 * d), d = 1..3, holds the corner
// (own corner) ^ d. A lane's corner is the same for its rows g and g + 8.
PCNN_HD inline int lane_corner(int lane) { return (lane >> 2) & 3; }

// ---- the weight gradient: dw (K x taps) = d(pre-activation) (K x positions) x (positions x taps)

// The weight-gradient kernel's block (conv2d_backward_mma.cu): A = d(pre-activation) of one image
// as packed words, rows = filters (mrows: m16 tiles covering K; rows past K zero), k = output
// positions padded to 16 (kpos; positions past P*Q zero), rows padded to 4 mod 8 words; B =
// the input gathered from the padded 16-bit image at (position corner + tap offset), columns =
// the taps and one more for the bias, whose offset points at a plane of ones (so the same products
// give db), n8 tiles padded with zero-plane taps. Shared memory: the words [mrows][dpitch], the
// fp32 d(pre-activation) as stage_dact writes it [K][P*Q], the position corners [kpos] and the
// column offsets [ntiles * 8] (ints), then the image [C + 2][Hp][Wp] (16-bit: C planes, zeros,
// ones).
struct ConvDwMmaLayout {
  int C, Hp, Wp, PQ, taps, cols, ntiles, kpos, dpitch, mrows;
  int d_words, dstage_floats, pos_words, col_words, image_halves, bytes;
  PCNN_HD ConvDwMmaLayout(const Conv2dShape& s, int mt) {
    C = s.C;
    Hp = s.H + 2 * s.pad;
    Wp = s.W + 2 * s.pad;
    PQ = s.P() * s.Q();
    taps = s.C * s.R * s.S;
    cols = taps + 1;
    ntiles = (cols + 7) / 8;
    kpos = (PQ + 15) / 16 * 16;
    dpitch = kpos / 2 + 4;
    mrows = 16 * mt;
    d_words = mrows * dpitch;
    dstage_floats = s.K * PQ;
    pos_words = kpos;
    col_words = ntiles * 8;
    image_halves = (s.C + 2) * Hp * Wp;
    bytes = 4 * (d_words + dstage_floats + pos_words + col_words) + 2 * image_halves;
  }
  PCNN_HD int zero_plane() const { return C * Hp * Wp; }
  PCNN_HD int ones_plane() const { return (C + 1) * Hp * Wp; }
};

// Output position `pos`'s corner in the padded image (positions past P*Q: the first one's, whose
// elements the real products read anyway; their d(pre-activation) is zero).
PCNN_HD inline int dw_position_base(const Conv2dShape& s, const ConvDwMmaLayout& L, int pos) {
  if (pos >= L.PQ) pos = 0;
  return (pos / s.Q()) * s.stride * L.Wp + (pos % s.Q()) * s.stride;
}
// Column j's offset from a position's corner: tap j, the ones plane for the bias column, the
// zero plane past it.
PCNN_HD inline int dw_column_offset(const Conv2dShape& s, const ConvDwMmaLayout& L, int j) {
  if (j == L.taps) return L.ones_plane();
  if (j > L.taps) return L.zero_plane();
  const int c = j / (s.R * s.S), r = (j / s.S) % s.R, t = j % s.S;
  return (c * L.Hp + r) * L.Wp + t;
}
// Lane's B fragment for the k16 step ks (positions) of the n8 tile whose lane column sits at
// offset `col` (dw_column_offset of tile column g): positions 16 ks + 2t (+1), + 8, corners from
// the table `pos_base`.
PCNN_HD inline void gather_dw_b(const uint16_t* xs, const int* pos_base, int col, int ks, int lane,
                                uint32_t (&b)[2]) {
  const int t = lane & 3, p0 = 16 * ks + 2 * t;
  const auto pair = [&](int first) {
    return uint32_t(xs[pos_base[first] + col]) | (uint32_t(xs[pos_base[first + 1] + col]) << 16);
  };
  b[0] = pair(p0);
  b[1] = pair(p0 + 8);
}

}  // namespace pcnn::cuda::mma
