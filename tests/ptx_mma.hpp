// A warp's mma.m16n8k16 (.f16 / .bf16 A and B, .f32 C) computed on the CPU from its lanes'
// registers, placed as the PTX ISA's fragment tables place them ("Matrix Fragments for
// mma.m16n8k16 with floating point type"), written here by element from those tables, not from
// the kernels' word formulas (backends/cuda/mma_layout.hpp), which the tests check against it.
// Values travel as small integer codes (exact in any arithmetic) in the halves of a word.
#pragma once

#include <cstdint>

namespace pcnn::test::ptx {

// groupID = lane / 4, threadID_in_group = lane % 4. A element i (0..7, two a register): row
// groupID for a0, a1, a4, a5 and groupID + 8 for a2, a3, a6, a7; column threadID_in_group * 2 +
// (i & 1), plus 8 for i >= 4. B element i (0..3): row (k) threadID_in_group * 2 + (i & 1), plus
// 8 for i >= 2; column groupID. C element i (0..3): row groupID for c0, c1, groupID + 8 for c2,
// c3; column threadID_in_group * 2 + (i & 1).
inline void a_element(int lane, int i, int& row, int& col) {
  const int g = lane / 4, t = lane % 4;
  row = (i == 2 || i == 3 || i == 6 || i == 7) ? g + 8 : g;
  col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
}
inline void b_element(int lane, int i, int& row, int& col) {
  const int g = lane / 4, t = lane % 4;
  row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
  col = g;
}
inline void c_element(int lane, int i, int& row, int& col) {
  const int g = lane / 4, t = lane % 4;
  row = i >= 2 ? g + 8 : g;
  col = t * 2 + (i & 1);
}

inline uint32_t pack(uint16_t lo, uint16_t hi) { return uint32_t(lo) | (uint32_t(hi) << 16); }
inline uint16_t half(uint32_t word, int which) {
  return uint16_t(which ? word >> 16 : word & 0xffffu);
}

// acc[lane] += A B for the warp whose lanes hold a[lane] and b[lane].
inline void mma_m16n8k16(const uint32_t (&a)[32][4], const uint32_t (&b)[32][2],
                         int64_t (&acc)[32][4]) {
  int64_t a16[16][16] = {}, b16[16][8] = {};
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 4; ++r)
      for (int h = 0; h < 2; ++h) {
        int row, col;
        a_element(lane, 2 * r + h, row, col);
        a16[row][col] = half(a[lane][r], h);
      }
    for (int r = 0; r < 2; ++r)
      for (int h = 0; h < 2; ++h) {
        int row, col;
        b_element(lane, 2 * r + h, row, col);
        b16[row][col] = half(b[lane][r], h);
      }
  }
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      int row, col;
      c_element(lane, i, row, col);
      for (int k = 0; k < 16; ++k) acc[lane][i] += a16[row][k] * b16[k][col];
    }
}

}  // namespace pcnn::test::ptx
