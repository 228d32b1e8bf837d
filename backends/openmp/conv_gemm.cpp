// Implicit-im2col convolution GEMMs (see conv_gemm.hpp): the matrix GEMM core with an image
// source for B; the data gradient goes through a column buffer and a vectorised col2im.
#include "backends/openmp/conv_gemm.hpp"

#include <algorithm>

#include "backends/openmp/gemm_kernel.hpp"

namespace pcnn::omp {

void ConvTables::build(const Conv2dShape& s) {
  Hp = s.H + 2 * s.pad;
  Wp = s.W + 2 * s.pad;
  // Both tables get kGemmNR trailing zeros: a gather of a ragged last panel may read them.
  row_off.assign(size_t(s.C) * s.R * s.S + kGemmNR, 0);
  for (int c = 0, i = 0; c < s.C; ++c)
    for (int r = 0; r < s.R; ++r)
      for (int t = 0; t < s.S; ++t) row_off[size_t(i++)] = (c * Hp + r) * Wp + t;
  const int P = s.P(), Q = s.Q();
  col_off.assign(size_t(P) * Q + kGemmNR, 0);
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < Q; ++q) col_off[size_t(p) * Q + q] = p * s.stride * Wp + q * s.stride;
  row_runs = chunk_runs(row_off.data(), s.C * s.R * s.S);
  col_runs = chunk_runs(col_off.data(), P * Q);
}

const float* padded_image(const Conv2dShape& s, const ConvTables& t, const float* xn,
                          std::vector<float>& buf) {
  if (s.pad == 0) return xn;
  if (buf.size() < t.padded_size(s)) buf.resize(t.padded_size(s));
  float* xp = buf.data();
  std::fill(xp, xp + t.padded_size(s), 0.f);
  for (int c = 0; c < s.C; ++c)
    for (int h = 0; h < s.H; ++h) {
      const float* src = xn + (size_t(c) * s.H + h) * s.W;
      std::copy(src, src + s.W, xp + (size_t(c) * t.Hp + h + s.pad) * t.Wp + s.pad);
    }
  return xp;
}

void conv_forward_gemm(const Conv2dShape& s, const ConvTables& t, const float* xp,
                       const float* w, float* yn, GemmPack& pack) {
  const int PQ = s.P() * s.Q(), CRS = s.C * s.R * s.S;
  const kernel::OffsetB col{xp, t.row_off.data(), t.col_off.data(), t.col_runs.data()};
  kernel::gemm_core(false, s.K, PQ, CRS, 1.f, w, CRS, col, 0.f, kernel::MatrixC{yn, PQ}, pack);
}

void conv_weights_gemm(const Conv2dShape& s, const ConvTables& t, const float* xp,
                       const float* dyn, float beta, float* dw, GemmPack& pack) {
  const int PQ = s.P() * s.Q(), CRS = s.C * s.R * s.S;
  // B = col^T: its k index is pq and its j index crs, so the two tables swap roles.
  const kernel::OffsetB col_t{xp, t.col_off.data(), t.row_off.data(), t.row_runs.data()};
  kernel::gemm_core(false, s.K, CRS, PQ, 1.f, dyn, PQ, col_t, beta, kernel::MatrixC{dw, CRS},
                    pack);
}

void conv_data_gemm(const Conv2dShape& s, const ConvTables& t, const float* w, const float* dyn,
                    float* dxp, std::vector<float>& col, GemmPack& pack) {
  const int P = s.P(), Q = s.Q(), PQ = P * Q, CRS = s.C * s.R * s.S, st = s.stride;
  if (col.size() < size_t(CRS) * PQ) col.resize(size_t(CRS) * PQ);
  kernel::gemm_core(true, CRS, PQ, s.K, 1.f, w, CRS, kernel::MatrixB{false, dyn, PQ}, 0.f,
                    kernel::MatrixC{col.data(), PQ}, pack);
  // col2im as a separate pass, tap by tap: consecutive rows p of one tap never overlap, while
  // neighbouring taps do (scattering straight from the GEMM tiles stalled on store forwarding).
  for (int crs = 0; crs < CRS; ++crs) {
    float* base = dxp + t.row_off[size_t(crs)];
    const float* src = col.data() + size_t(crs) * PQ;
    for (int p = 0; p < P; ++p) {
      float* dst = base + size_t(p) * st * t.Wp;
      const float* in = src + size_t(p) * Q;
      if (st == 1) {
        for (int q = 0; q < Q; ++q) dst[q] += in[q];
      } else {
        for (int q = 0; q < Q; ++q) dst[size_t(q) * st] += in[q];
      }
    }
  }
}

}  // namespace pcnn::omp
