// The tensor-core convolution forward's index arithmetic (backends/cuda/conv_mma_layout.hpp),
// checked on the CPU: a block's shared memory is laid out as the kernel stages it (the padded image
// and its zero plane, the tap offsets, the filters as B words), every warp's m16 tiles gather
// their A fragments through gather_a, a warp's products are computed as the PTX tables place the
// fragments (tests/ptx_mma.hpp), and the accumulators, read back through c_frag_coord and
// row_position, must be the convolution of every output (each exactly once) over every block of
// every image. Under a 2 x 2 pool a row's corner must be its argmax byte (i * 2 + j) and its window
// its pooled output's place, and the shuffles must read the right lanes: lane ^ 4d holds the same
// window and channel at corner (own corner) ^ d. The weight-gradient kernel's block
// (conv2d_backward_mma.cu) is checked the same way against dw and db, and its data-gradient
// kernel's mapping (the forward block on flipped filters) against dx. Integer codes keep every
// sum exact.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cuda/conv_mma_layout.hpp"
#include "core/pool_math.hpp"
#include "core/rng.hpp"
#include "tests/harness.hpp"
#include "tests/ptx_mma.hpp"

namespace pcnn::test {

namespace {

using namespace cuda::mma;

struct ConvCodes {
  std::vector<uint16_t> x, w;
  std::vector<int64_t> b;
};

// y (N,K,P,Q) of x, w, b: the plain convolution.
std::vector<int64_t> convolve(const Conv2dShape& s, const ConvCodes& d) {
  std::vector<int64_t> y(s.y_size());
  for (int n = 0; n < s.N; ++n)
    for (int k = 0; k < s.K; ++k)
      for (int p = 0; p < s.P(); ++p)
        for (int q = 0; q < s.Q(); ++q) {
          int64_t sum = d.b[k];
          for (int c = 0; c < s.C; ++c)
            for (int r = 0; r < s.R; ++r)
              for (int t = 0; t < s.S; ++t) {
                const int h = p * s.stride - s.pad + r, w = q * s.stride - s.pad + t;
                if (h < 0 || h >= s.H || w < 0 || w >= s.W) continue;
                sum += int64_t(d.x[((size_t(n) * s.C + c) * s.H + h) * s.W + w]) *
                       d.w[((size_t(k) * s.C + c) * s.R + r) * s.S + t];
              }
          y[((size_t(n) * s.K + k) * s.P() + p) * s.Q() + q] = sum;
        }
  return y;
}

// One block (image n, filters k0 .. k0 + kt - 1) as the kernel computes it; its outputs written
// into y (counted in `writes`), the corner partners of each accumulator checked.
void run_block(const Conv2dShape& s, int pw, int kt, const ConvCodes& d, int n, int k0,
               std::vector<int64_t>& y, std::vector<int>& writes, int& bad_pool) {
  const ConvMmaLayout L(s, kt);
  // The stage: image n zero-padded, then the zero plane; tap offsets; B words (zero past K and
  // past the taps); biases.
  std::vector<uint16_t> xs(L.image_halves, 0);
  for (int c = 0; c < s.C; ++c)
    for (int h = 0; h < s.H; ++h)
      for (int w = 0; w < s.W; ++w)
        xs[(c * L.Hp + h + s.pad) * L.Wp + w + s.pad] =
            d.x[((size_t(n) * s.C + c) * s.H + h) * s.W + w];
  std::vector<int> taps(L.kpad);
  for (int k = 0; k < L.kpad; ++k) taps[k] = tap_offset(s, L, k);
  std::vector<uint32_t> ws(L.w_words, 0xdeadbeefu);
  const auto wcode = [&](int j, int tap) -> uint16_t {
    return k0 + j < s.K && tap < L.taps ? d.w[size_t(k0 + j) * L.taps + tap] : 0;
  };
  for (int j = 0; j < kt; ++j)
    for (int kp = 0; kp < L.words_k; ++kp)
      ws[j * L.pitch + kp] = ptx::pack(wcode(j, 2 * kp), wcode(j, 2 * kp + 1));

  const int rows = mma_rows(s, pw), mtiles = (rows + 15) / 16;
  for (int mt = 0; mt < mtiles; ++mt) {  // whichever warp takes it
    int64_t acc[4][32][4] = {};
    for (int nt = 0; nt < kt / 8; ++nt)
      for (int lane = 0; lane < 32; ++lane)
        for (int c = 0; c < 4; ++c) {
          int row, col;
          c_frag_coord(lane, c, row, col);
          acc[nt][lane][c] = k0 + nt * 8 + col < s.K ? d.b[k0 + nt * 8 + col] : 0;
        }
    for (int ks = 0; ks < L.kpad / 16; ++ks) {
      uint32_t a[32][4];
      for (int lane = 0; lane < 32; ++lane) {
        const int lo = row_base(s, L, pw, mt * 16 + (lane >> 2));
        const int hi = row_base(s, L, pw, mt * 16 + (lane >> 2) + 8);
        gather_a(xs.data(), taps.data(), lo, hi, ks, lane, a[lane]);
      }
      for (int nt = 0; nt < kt / 8; ++nt) {
        uint32_t b[32][2];
        for (int lane = 0; lane < 32; ++lane)
          for (int r = 0; r < 2; ++r) b[lane][r] = ws[b_frag_word(L.pitch, nt * 8, ks, lane, r)];
        ptx::mma_m16n8k16(a, b, acc[nt]);
      }
    }
    for (int nt = 0; nt < kt / 8; ++nt)
      for (int lane = 0; lane < 32; ++lane)
        for (int c = 0; c < 4; ++c) {
          int row, col;
          c_frag_coord(lane, c, row, col);
          const int m = mt * 16 + row, k = k0 + nt * 8 + col;
          if (m >= rows || k >= s.K) continue;
          int p, q;
          row_position(s, pw, m, p, q);
          const size_t at = ((size_t(n) * s.K + k) * s.P() + p) * s.Q() + q;
          y[at] = acc[nt][lane][c];
          ++writes[at];
          if (pw != 2) continue;
          // corner = the argmax byte's i * 2 + j, window = the pooled output's place
          bad_pool += (p & 1) * 2 + (q & 1) != (m & 3) || (p / 2) * (s.Q() / 2) + q / 2 != m >> 2;
          for (int dd = 1; dd < 4; ++dd) {  // the shuffle partners' accumulator c
            int prow, pcol;
            c_frag_coord(lane ^ (4 * dd), c, prow, pcol);
            const int pm = mt * 16 + prow;
            bad_pool += pm >> 2 != m >> 2 || pcol != col || (pm & 3) != (lane_corner(lane) ^ dd) ||
                        (m & 3) != lane_corner(lane);
          }
        }
  }
}

void check_conv(const std::string& name, const Conv2dShape& s, int pw, int kt, uint64_t seed) {
  Rng rng(seed);
  ConvCodes d;
  d.x.resize(s.x_size());
  d.w.resize(s.w_size());
  d.b.resize(size_t(s.K));
  for (auto& v : d.x) v = uint16_t(1 + rng.uniform() * 6.0);  // never 0: a lost pixel shows
  for (auto& v : d.w) v = uint16_t(1 + rng.uniform() * 6.0);
  for (auto& v : d.b) v = int64_t(rng.uniform() * 100.0);
  std::vector<int64_t> y(s.y_size(), -1);
  std::vector<int> writes(s.y_size(), 0);
  int bad_pool = 0;
  for (int n = 0; n < s.N; ++n)
    for (int k0 = 0; k0 < s.K; k0 += kt) run_block(s, pw, kt, d, n, k0, y, writes, bad_pool);
  const std::vector<int64_t> want = convolve(s, d);
  // Under a 2 x 2 pool only the windows' outputs are computed (rows / columns past them are not).
  const int P = pw == 2 ? s.P() / 2 * 2 : s.P(), Q = pw == 2 ? s.Q() / 2 * 2 : s.Q();
  int wrong = 0, not_once = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const int q = int(i % s.Q()), p = int(i / s.Q() % s.P());
    const bool computed = p < P && q < Q;
    not_once += writes[i] != (computed ? 1 : 0);
    wrong += computed && y[i] != want[i];
  }
  CHECK_MESSAGE(wrong == 0, name << ": " << wrong << " of " << y.size() << " outputs wrong");
  CHECK_MESSAGE(not_once == 0, name << ": " << not_once << " outputs not written exactly once");
  CHECK_MESSAGE(bad_pool == 0,
                name << ": " << bad_pool << " rows in the wrong window, corner or shuffle lane");
}

// The weight-gradient kernel's block over all images (one chunk), as conv2d_backward_mma.cu lays
// it out: d(pre-activation) codes packed as A words, the image with its zero and ones planes, the
// position and column tables, every n8 tile of columns; the sums must be dw (K x taps) and, in
// the last column, db.
void check_weight_gradient(const std::string& name, const Conv2dShape& s, int mt, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint16_t> x(s.x_size()), dact(s.y_size());
  for (auto& v : x) v = uint16_t(1 + rng.uniform() * 6.0);
  for (auto& v : dact) v = uint16_t(1 + rng.uniform() * 6.0);
  const ConvDwMmaLayout L(s, mt);
  const int P = s.P(), Q = s.Q();
  std::vector<int> pos_base(L.kpos), col_off(L.col_words);
  for (int e = 0; e < L.kpos; ++e) pos_base[e] = dw_position_base(s, L, e);
  for (int e = 0; e < L.col_words; ++e) col_off[e] = dw_column_offset(s, L, e);
  std::vector<int64_t> got(size_t(s.K) * L.cols, 0);
  struct WarpSums {
    int64_t v[32][4] = {};  // [lane][accumulator]
  };
  std::vector<WarpSums> acc(size_t(L.ntiles) * mt);  // [tile][m16 tile]
  for (int n = 0; n < s.N; ++n) {
    std::vector<uint16_t> xs(L.image_halves, 0);
    for (int c = 0; c < s.C; ++c)
      for (int h = 0; h < s.H; ++h)
        for (int w = 0; w < s.W; ++w)
          xs[(c * L.Hp + h + s.pad) * L.Wp + w + s.pad] =
              x[((size_t(n) * s.C + c) * s.H + h) * s.W + w];
    for (int e = 0; e < L.Hp * L.Wp; ++e) xs[L.ones_plane() + e] = 1;
    std::vector<uint32_t> words(L.d_words, 0xdeadbeefu);
    const auto d = [&](int k, int pos) -> uint16_t {
      return k < s.K && pos < L.PQ ? dact[(size_t(n) * s.K + k) * L.PQ + pos] : 0;
    };
    for (int row = 0; row < L.mrows; ++row)
      for (int kp = 0; kp < L.kpos / 2; ++kp)
        words[row * L.dpitch + kp] = ptx::pack(d(row, 2 * kp), d(row, 2 * kp + 1));
    for (int ks = 0; ks < L.kpos / 16; ++ks)
      for (int tile = 0; tile < L.ntiles; ++tile) {
        uint32_t b[32][2];
        for (int lane = 0; lane < 32; ++lane)
          gather_dw_b(xs.data(), pos_base.data(), col_off[tile * 8 + (lane >> 2)], ks, lane,
                      b[lane]);
        for (int m = 0; m < mt; ++m) {
          uint32_t a[32][4];
          for (int lane = 0; lane < 32; ++lane)
            for (int r = 0; r < 4; ++r)
              a[lane][r] = words[a_frag_word(L.dpitch, m * 16, ks, lane, r)];
          ptx::mma_m16n8k16(a, b, acc[size_t(tile) * mt + m].v);
        }
      }
  }
  for (int tile = 0; tile < L.ntiles; ++tile)
    for (int m = 0; m < mt; ++m)
      for (int lane = 0; lane < 32; ++lane)
        for (int c = 0; c < 4; ++c) {
          int row, col;
          c_frag_coord(lane, c, row, col);
          const int k = m * 16 + row, j = tile * 8 + col;
          if (k < s.K && j < L.cols)
            got[size_t(k) * L.cols + j] = acc[size_t(tile) * mt + m].v[lane][c];
        }
  int wrong = 0;
  for (int k = 0; k < s.K; ++k)
    for (int j = 0; j < L.cols; ++j) {
      int64_t want = 0;
      for (int n = 0; n < s.N; ++n)
        for (int p = 0; p < P; ++p)
          for (int q = 0; q < Q; ++q) {
            const int64_t g = dact[((size_t(n) * s.K + k) * P + p) * Q + q];
            if (j == L.taps) {
              want += g;
              continue;
            }
            const int c = j / (s.R * s.S), r = (j / s.S) % s.R, t = j % s.S;
            const int h = p * s.stride - s.pad + r, w = q * s.stride - s.pad + t;
            if (h >= 0 && h < s.H && w >= 0 && w < s.W)
              want += g * x[((size_t(n) * s.C + c) * s.H + h) * s.W + w];
          }
      wrong += got[size_t(k) * L.cols + j] != want;
    }
  CHECK_MESSAGE(wrong == 0, name << ": " << wrong << " of " << s.K * L.cols
                                 << " weight and bias gradients wrong");
}

// The data-gradient kernel's mapping: the forward block (run_block) on dx_as_forward's shape, the
// d(pre-activation) as its image and the flipped, transposed filters (flipped_filter_index) as
// its filters, must give dx of the original layer, here from plain loops over its taps.
void check_data_gradient(const std::string& name, const Conv2dShape& s, int kt, uint64_t seed) {
  REQUIRE(dx_as_forward_ok(s));
  Rng rng(seed);
  const Conv2dShape t = dx_as_forward(s);
  std::vector<uint16_t> w(s.w_size());
  for (auto& v : w) v = uint16_t(1 + rng.uniform() * 6.0);
  ConvCodes d;
  d.x.resize(s.y_size());  // d(pre-activation) (N,K,P,Q): the transposed layer's input
  for (auto& v : d.x) v = uint16_t(1 + rng.uniform() * 6.0);
  d.w.resize(t.w_size());
  for (int c = 0; c < s.C; ++c)
    for (int k = 0; k < s.K; ++k)
      for (int r = 0; r < s.R; ++r)
        for (int tt = 0; tt < s.S; ++tt)
          d.w[((size_t(c) * s.K + k) * s.R + r) * s.S + tt] =
              w[flipped_filter_index(s, c, k, r, tt)];
  d.b.assign(size_t(s.C), 0);
  REQUIRE(t.y_size() == s.x_size());
  std::vector<int64_t> dx(t.y_size(), -1);
  std::vector<int> writes(t.y_size(), 0);
  int unused = 0;
  for (int n = 0; n < s.N; ++n)
    for (int c0 = 0; c0 < s.C; c0 += kt) run_block(t, 1, kt, d, n, c0, dx, writes, unused);
  int wrong = 0, not_once = 0;
  const int P = s.P(), Q = s.Q();
  for (int n = 0; n < s.N; ++n)
    for (int c = 0; c < s.C; ++c)
      for (int h = 0; h < s.H; ++h)
        for (int wi = 0; wi < s.W; ++wi) {
          int64_t want = 0;
          for (int k = 0; k < s.K; ++k)
            for (int r = 0; r < s.R; ++r)
              for (int tt = 0; tt < s.S; ++tt) {
                const int p = h + s.pad - r, q = wi + s.pad - tt;
                if (p < 0 || p >= P || q < 0 || q >= Q) continue;
                want += int64_t(d.x[((size_t(n) * s.K + k) * P + p) * Q + q]) *
                        w[((size_t(k) * s.C + c) * s.R + r) * s.S + tt];
              }
          const size_t at = ((size_t(n) * s.C + c) * s.H + h) * s.W + wi;
          wrong += dx[at] != want;
          not_once += writes[at] != 1;
        }
  CHECK_MESSAGE(wrong == 0, name << ": " << wrong << " of " << dx.size() << " dx wrong");
  CHECK_MESSAGE(not_once == 0, name << ": " << not_once << " dx not written exactly once");
}

Conv2dShape shape(int N, int C, int H, int W, int K, int R, int S, int stride, int pad) {
  Conv2dShape s;
  s.N = N, s.C = C, s.H = H, s.W = W, s.K = K, s.R = R, s.S = S, s.stride = stride, s.pad = pad;
  return s;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("tensor-core convolution: gathered fragments give the convolution, pooled or not") {
  // LeNet-5's layers (6 filters in one n8 tile, 16 in two), a 3x3 layer of 32 filters (four),
  // more filters than a block holds (two blocks an image, the second partly past K), a stride,
  // padding wider than the filter's reach, and a last m16 tile partly past the image's rows.
  check_conv("lenet5 conv1", shape(2, 1, 28, 28, 6, 5, 5, 1, 2), 2, 8, 1);
  check_conv("lenet5 conv2", shape(2, 6, 14, 14, 16, 5, 5, 1, 0), 2, 16, 2);
  check_conv("3x3 16 -> 32", shape(1, 16, 12, 12, 32, 3, 3, 1, 1), 2, 32, 3);
  check_conv("40 filters", shape(1, 3, 10, 10, 40, 3, 3, 1, 1), 1, 32, 4);
  check_conv("stride 2", shape(2, 5, 11, 9, 11, 3, 2, 2, 1), 1, 16, 5);
  check_conv("wide pad", shape(1, 2, 5, 7, 3, 2, 2, 1, 3), 2, 8, 6);
  check_conv("odd rows", shape(1, 4, 7, 7, 9, 3, 3, 1, 0), 1, 16, 7);
}

TEST_CASE("tensor-core convolution: a window's corners pool as core/pool_math.hpp pools them") {
  // Values with ties, signed zeros, infinities and NaNs in every place, so the first-maximum
  // rule and NaN's comparisons are what decide.
  const float kinds[] = {1.f, 2.f, -1.f, 0.f, -0.f, INFINITY, -INFINITY, NAN, 0.5f};
  Pool2dShape s;
  s.H = s.W = 2;
  int wrong = 0;
  for (int code = 0; code < 9 * 9 * 9 * 9; ++code) {
    float v[4];
    for (int i = 0, c = code; i < 4; ++i, c /= 9) v[i] = kinds[c % 9];
    for (bool is_max : {true, false}) {
      int best = -1, ref_best = -1;
      const float got = pool_corners(is_max, v, best);
      const PoolWindow b = pool_window(s, 0, 0);
      const float want = pool_finish(pool_window_reduce(v, 2, b, is_max, ref_best), b, is_max);
      const bool same = (std::isnan(got) && std::isnan(want)) ||
                        std::memcmp(&got, &want, sizeof got) == 0;
      wrong += !same || (is_max && uint8_t(best) != pool_argmax_byte(s, 0, 0, ref_best));
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("tensor-core weight gradient: gathered fragments give dw and db") {
  // LeNet-5's layers (positions padded from 784 and 100 to a multiple of 16), Simard 2003's
  // stride-2 layers (5 and 50 filters: four m16 tiles), 32 filters of 3x3, padding.
  check_weight_gradient("lenet5 conv1", shape(2, 1, 28, 28, 6, 5, 5, 1, 2), 1, 11);
  check_weight_gradient("lenet5 conv2", shape(3, 6, 14, 14, 16, 5, 5, 1, 0), 1, 12);
  check_weight_gradient("simard conv1", shape(2, 1, 29, 29, 5, 5, 5, 2, 0), 1, 13);
  check_weight_gradient("simard conv2", shape(2, 5, 13, 13, 50, 5, 5, 2, 0), 4, 14);
  check_weight_gradient("3x3 16 -> 32", shape(1, 16, 12, 12, 32, 3, 3, 1, 1), 2, 15);
}

TEST_CASE("tensor-core data gradient: the forward block on the flipped filters gives dx") {
  // LeNet-5's conv2 (6 channels: one n8 tile), a padded 3x3 layer of 16 -> 32 (two), a 1x1.
  check_data_gradient("lenet5 conv2", shape(2, 6, 14, 14, 16, 5, 5, 1, 0), 8, 21);
  check_data_gradient("3x3 16 -> 32", shape(1, 16, 12, 12, 32, 3, 3, 1, 1), 16, 22);
  check_data_gradient("1x1", shape(2, 20, 5, 6, 3, 1, 1, 1, 0), 32, 23);
}

}  // TEST_SUITE

}  // namespace pcnn::test
