// The three GEMMs of a convolution, on one image and one thread, with im2col done implicitly:
// col(crs, pq) = xp[row_off[crs] + col_off[pq]] over the zero-padded image xp, so B panels are
// packed straight from the image and the (C*R*S, P*Q) matrix is never stored in the forward
// and weight-gradient directions. The data gradient computes it (w^T dy) and adds it back into
// the padded image tap by tap (col2im).
#pragma once

#include <vector>

#include "backends/openmp/gemm_block.hpp"
#include "backends/openmp/offset_runs.hpp"
#include "core/shapes.hpp"

namespace pcnn::omp {

// Offsets of the im2col matrix of shape s over its padded image (C, Hp, Wp).
struct ConvTables {
  int Hp = 0, Wp = 0;
  std::vector<int> row_off;  // (C*R*S): c*Hp*Wp + r*Wp + t, then kGemmNR zeros
  std::vector<int> col_off;  // (P*Q): p*stride*Wp + q*stride, then kGemmNR zeros
  std::vector<ChunkRuns> row_runs, col_runs;  // the same tables as runs, per kGemmNR chunk
  void build(const Conv2dShape& s);
  size_t padded_size(const Conv2dShape& s) const { return size_t(s.C) * Hp * Wp; }
};

// x_n (C,H,W) -> (C,Hp,Wp) with a zero border of s.pad, in buf; x_n itself when pad == 0.
const float* padded_image(const Conv2dShape& s, const ConvTables& t, const float* xn,
                          std::vector<float>& buf);

// x_n padded (C,Hp,Wp), w (K,CRS) -> y_n (K,PQ) = w col_n; overwrites y_n.
void conv_forward_gemm(const Conv2dShape& s, const ConvTables& t, const float* xp,
                       const float* w, float* yn, GemmPack& pack);

// x_n padded, dy_n (K,PQ) -> dw (K,CRS) = dy_n col_n^T + beta dw (beta 0 overwrites).
void conv_weights_gemm(const Conv2dShape& s, const ConvTables& t, const float* xp,
                       const float* dyn, float beta, float* dw, GemmPack& pack);

// w (K,CRS), dy_n (K,PQ) -> dx_n padded (C,Hp,Wp) += col2im(w^T dy_n); accumulates.
// col: the thread's (CRS, PQ) buffer, grown on demand.
void conv_data_gemm(const Conv2dShape& s, const ConvTables& t, const float* w, const float* dyn,
                    float* dxp, std::vector<float>& col, GemmPack& pack);

}  // namespace pcnn::omp
