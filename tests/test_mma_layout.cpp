// The tensor-core tiles' index arithmetic (backends/cuda/mma_layout.hpp), checked on the CPU: a
// block tile's operands are stashed into "shared memory" word by word as the fetching threads
// would, each lane of each warp reads its fragments from there, and a warp's m16n8k16 product is
// computed from those fragments the way the PTX ISA's fragment tables place them
// (tests/ptx_mma.hpp, not the header's word formulas); the accumulators, placed back by
// c_frag_coord, must give the block's product. What only a GPU can tell (that the
// hardware agrees with the tables) is checked by the op table's 16-bit dense cases on cuda.
#include <cstdint>
#include <vector>

#include "backends/cuda/mma_layout.hpp"
#include "core/rng.hpp"
#include "tests/harness.hpp"
#include "tests/ptx_mma.hpp"

namespace pcnn::test {

namespace {

using namespace cuda::mma;
using ptx::pack;

// One k32 step of a BM x BN block tile of A (BM x 32) B (32 x BN), through the layout.
template <class T>
void check_tile(bool a_contig_k, bool b_contig_j, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint16_t> A(T::BM * T::BK), B(T::BK * T::BN);  // small codes: products stay exact
  for (auto& v : A) v = uint16_t(rng.uniform() * 7.0);
  for (auto& v : B) v = uint16_t(rng.uniform() * 7.0);
  const auto a = [&](int i, int k) { return A[i * T::BK + k]; };
  const auto b = [&](int k, int j) { return B[k * T::BN + j]; };

  // Every thread's fetch and stash.
  std::vector<uint32_t> As(T::BM * T::kPitch, 0xdeadbeefu), Bs(T::BN * T::kPitch, 0xdeadbeefu);
  for (int tid = 0; tid < T::kThreads; ++tid) {
    for (int u = 0; u < T::kAWpT; ++u) {
      int row, kp;
      a_word_coord(a_contig_k, T::BM, tid + u * T::kThreads, row, kp);
      As[row * T::kPitch + kp] = pack(a(row, 2 * kp), a(row, 2 * kp + 1));
    }
    for (int u = 0; u < T::kBWpT; ++u) {
      int col, kp;
      b_word_coord(b_contig_j, T::BN, tid + u * T::kThreads, col, kp);
      Bs[col * T::kPitch + kp] = pack(b(2 * kp, col), b(2 * kp + 1, col));
    }
  }
  for (int row = 0; row < T::BM; ++row)  // every word of the tile written (the pad words not)
    for (int kp = 0; kp < T::kWordsK; ++kp) REQUIRE(As[row * T::kPitch + kp] != 0xdeadbeefu);
  for (int col = 0; col < T::BN; ++col)
    for (int kp = 0; kp < T::kWordsK; ++kp) REQUIRE(Bs[col * T::kPitch + kp] != 0xdeadbeefu);

  // Each warp's products, from its lanes' fragments placed as the PTX tables say.
  std::vector<int64_t> C(T::BM * T::BN, -1);
  for (int warp = 0; warp < T::WM * T::WN; ++warp) {
    const int wm = warp / T::WN, wn = warp % T::WN;
    for (int mt = 0; mt < T::MT; ++mt)
      for (int nt = 0; nt < T::NT; ++nt) {
        int64_t acc[32][4] = {};
        for (int ks = 0; ks < 2; ++ks) {
          uint32_t a[32][4], b[32][2];
          for (int lane = 0; lane < 32; ++lane) {
            for (int r = 0; r < 4; ++r)
              a[lane][r] = As[a_frag_word(T::kPitch, wm * T::WTM + mt * 16, ks, lane, r)];
            for (int r = 0; r < 2; ++r)
              b[lane][r] = Bs[b_frag_word(T::kPitch, wn * T::WTN + nt * 8, ks, lane, r)];
          }
          ptx::mma_m16n8k16(a, b, acc);
        }
        for (int lane = 0; lane < 32; ++lane)
          for (int c = 0; c < 4; ++c) {
            int row, col;
            c_frag_coord(lane, c, row, col);
            C[(wm * T::WTM + mt * 16 + row) * T::BN + wn * T::WTN + nt * 8 + col] = acc[lane][c];
          }
      }
  }
  int wrong = 0;
  for (int i = 0; i < T::BM; ++i)
    for (int j = 0; j < T::BN; ++j) {
      int64_t want = 0;
      for (int k = 0; k < T::BK; ++k) want += int64_t(a(i, k)) * b(k, j);
      wrong += C[i * T::BN + j] != want;
    }
  CHECK_MESSAGE(wrong == 0, wrong << " of " << T::BM * T::BN << " products wrong (tile "
                                  << T::BM << "x" << T::BN << ", A contiguous in k: "
                                  << a_contig_k << ", B in j: " << b_contig_j << ")");
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("tensor-core tiles: stash, fragments and accumulators agree with the PTX tables") {
  for (bool a_k : {true, false})
    for (bool b_j : {true, false}) {
      check_tile<MmaTile<32, 32, 2, 2>>(a_k, b_j, 1);
      check_tile<MmaTile<64, 64, 2, 2>>(a_k, b_j, 2);
      check_tile<MmaTile<64, 32, 2, 1>>(a_k, b_j, 3);
    }
}

TEST_CASE("tensor-core tiles: the eight rows of a fragment load fall in different banks") {
  // 32 banks of one word: the 32 lanes of one A (or B) register load hit 32 banks.
  for (int r = 0; r < 4; ++r) {
    std::vector<int> hits(32, 0);
    for (int lane = 0; lane < 32; ++lane)
      ++hits[a_frag_word(MmaTile<32, 32, 2, 2>::kPitch, 16, 1, lane, r) % 32];
    for (int h : hits) CHECK(h == 1);
  }
  for (int r = 0; r < 2; ++r) {
    std::vector<int> hits(32, 0);
    for (int lane = 0; lane < 32; ++lane)
      ++hits[b_frag_word(MmaTile<32, 32, 2, 2>::kPitch, 8, 0, lane, r) % 32];
    for (int h : hits) CHECK(h == 1);
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
