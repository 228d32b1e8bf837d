// PCNN_HD marks small helpers that device code (CUDA, Kokkos-CUDA) calls as well as host code.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PCNN_HD __host__ __device__
#else
#define PCNN_HD
#endif
