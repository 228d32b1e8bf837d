// OpenMP 16-bit storage conversions: contiguous shares, one element per conversion, the same bits
// as serial's (core/precision.hpp). The precision is hoisted out of the loop so that each
// share's loop is one straight conversion.
#include "backends/openmp/openmp_backend.hpp"
#include "backends/openmp/parallel.hpp"

namespace pcnn {

void OpenMPBackend::round_to_16bit(Precision p, size_t n, const float* x, const float* scale,
                                   uint16_t* y) {
  const float s = scale ? *scale : 1.f;
  omp::for_shares(n, omp::team_for(n, threads_), [&](size_t begin, size_t end) {
    if (p == Precision::BF16) {
      for (size_t i = begin; i < end; ++i) y[i] = float_to_bf16(x[i] * s);
    } else {
      for (size_t i = begin; i < end; ++i) y[i] = float_to_f16(x[i] * s);
    }
  });
}

void OpenMPBackend::widen_16bit(Precision p, size_t n, const uint16_t* x, float* y) {
  omp::for_shares(n, omp::team_for(n, threads_), [&](size_t begin, size_t end) {
    if (p == Precision::BF16) {
      for (size_t i = begin; i < end; ++i) y[i] = bf16_to_float(x[i]);
    } else {
      for (size_t i = begin; i < end; ++i) y[i] = f16_to_float(x[i]);
    }
  });
}

}  // namespace pcnn
