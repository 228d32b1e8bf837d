// Batch normalisation of the cuda backend (cudnn inherits it). A channel's statistics are summed
// by several blocks at once (blockIdx.y: the channel, blockIdx.x: a fixed share of the images),
// in double, each block's partial written to scratch; the last block of a channel to finish adds
// the partials in block order and finishes the channel. So the grid fills the GPU whatever C is
// (one block per channel left 130 of 132 SMs idle on a 16-channel layer: 2 ms at batch 1024, now
// notes/tuning-cuda.md), and the sums do not depend on which block finished first: the same
// result every run. The element-wise passes (normalise, input gradient) are kernels of their own.
// A fused activation is a template argument (dispatch_activation once per launch): the normalise
// kernel applies it, the gradient kernels take dy through its derivative (from the output y).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "backends/cuda/common.cuh"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/launch.cuh"
#include "core/activation_math.hpp"
#include "core/batchnorm_math.hpp"

namespace pcnn {

namespace cuda {

namespace {

constexpr int kThreads = 256;  // a multiple of 32: block_sum's warps are full

// How the images of a channel are shared out: enough blocks for ~4 per SM in all, but at least
// ~2048 values a block so that a block's fixed costs stay small.
int image_shares(int N, int C, int HW, int sm_count) {
  const long long wanted = (4LL * sm_count + C - 1) / C;
  const long long by_work = (static_cast<long long>(N) * HW + 2047) / 2048;
  return int(std::max(1LL, std::min({wanted, by_work, static_cast<long long>(N)})));
}

// The images [first, last) of share k out of `shares` of N.
__device__ inline void share_range(int N, int shares, int k, int* first, int* last) {
  *first = int(static_cast<long long>(N) * k / shares);
  *last = int(static_cast<long long>(N) * (k + 1) / shares);
}

// Calls f(offset) for every value of channel c in images [n0, n1) of an (N,C,HW) tensor, the
// thread's values in rising order; consecutive threads read consecutive addresses.
template <typename F>
__device__ inline void for_channel_values(int n0, int n1, int c, int C, int HW, F f) {
  const long long count = static_cast<long long>(n1 - n0) * HW;
  const int step_n = kThreads / HW, step_hw = kThreads % HW;
  int n = n0 + int(threadIdx.x) / HW, hw = int(threadIdx.x) % HW;
  for (long long j = threadIdx.x; j < count; j += kThreads) {
    f((static_cast<size_t>(n) * C + c) * HW + hw);
    n += step_n;
    hw += step_hw;
    if (hw >= HW) { hw -= HW; ++n; }
  }
}

// Block totals of two sums, valid in thread 0.
__device__ inline void block_sums(double* a, double* b) {
  __shared__ double red[kThreads / 32];
  *a = block_sum(*a, red);
  *b = block_sum(*b, red);  // block_sum syncs before reusing red
}

// The partials of channel c, added in block order (thread 0).
__device__ inline double2 channel_total(const double2* partial, int c) {
  double2 t = make_double2(0.0, 0.0);
  for (unsigned k = 0; k < gridDim.x; ++k) {
    const double2 p = __ldcg(&partial[size_t(c) * gridDim.x + k]);  // L2, not a stale L1 line
    t.x += p.x;
    t.y += p.y;
  }
  return t;
}

// Two sums over channel blockIdx.y's values in this block's share of the images, term(at)
// giving a value's pair of terms; true in thread 0 of the channel's last block, with the
// channel's totals (partials added in block order) in *total.
template <typename Term>
__device__ bool channel_sums(int N, int C, int HW, Term term, double2* partial,
                             unsigned* counters, double2* total) {
  const int c = blockIdx.y;
  int n0, n1;
  share_range(N, gridDim.x, blockIdx.x, &n0, &n1);
  double a = 0, b = 0;
  for_channel_values(n0, n1, c, C, HW, [&](size_t at) {
    const double2 t = term(at);
    a += t.x;
    b += t.y;
  });
  block_sums(&a, &b);
  if (threadIdx.x == 0) partial[size_t(c) * gridDim.x + blockIdx.x] = make_double2(a, b);
  if (!last_block_done(&counters[c], gridDim.x) || threadIdx.x != 0) return false;
  *total = channel_total(partial, c);
  return true;
}

// x (N,C,HW) -> save_mean, save_inv_std; running statistics moved. Sums of x and x^2 in double
// (the variance from them loses nothing a float result could show at these magnitudes).
__global__ void batchnorm_stats_kernel(int N, int C, int HW, float eps, float momentum,
                                       const float* x, double2* partial, unsigned* counters,
                                       float* save_mean, float* save_inv_std,
                                       float* running_mean, float* running_var) {
  wait_for_previous_kernel();
  double2 t;
  const auto term = [&](size_t at) {
    const double v = x[at];
    return make_double2(v, v * v);
  };
  if (!channel_sums(N, C, HW, term, partial, counters, &t)) return;
  const long long M = static_cast<long long>(N) * HW;
  const double mean = t.x / double(M);
  const float var = float(fmax(t.y / double(M) - mean * mean, 0.0));
  batchnorm_keep_stats(int(blockIdx.y), float(mean), var, batchnorm_inv_std(var, eps), M,
                       momentum, save_mean, save_inv_std, running_mean, running_var);
}

// dy at element i through activation A's derivative from the output (y unread for None).
template <Activation A>
__device__ inline float act_grad(const float* dy, const float* y, size_t i) {
  if constexpr (A == Activation::None) return dy[i];
  else return dy[i] * activation_derivative<A>(y[i]);
}

// x, y, dy (N,C,HW) -> dbeta = sum g, dgamma = sum g * xhat per channel, g = dy through A.
template <Activation A>
__global__ void batchnorm_grad_sums_kernel(int N, int C, int HW, const float* x, const float* y,
                                           const float* dy, const float* save_mean,
                                           const float* save_inv_std, double2* partial,
                                           unsigned* counters, float* dgamma, float* dbeta) {
  wait_for_previous_kernel();
  const int c = blockIdx.y;
  const float mean = save_mean[c], inv_std = save_inv_std[c];
  double2 t;
  const auto term = [&](size_t at) {
    const float g = act_grad<A>(dy, y, at);
    return make_double2(g, double(g) * ((x[at] - mean) * inv_std));
  };
  if (!channel_sums(N, C, HW, term, partial, counters, &t)) return;
  dbeta[c] = float(t.x);
  dgamma[c] = float(t.y);
}

// y = A(normalize(x)) with per-channel statistics (batch ones in training, running ones in
// inference: inv_std given, or computed from var when inv_std is nullptr).
template <Activation A>
__global__ void batchnorm_apply_kernel(unsigned total, int C, int HW, float eps, const float* x,
                                       const float* gamma, const float* beta, const float* mean,
                                       const float* inv_std, const float* var, float* y) {
  wait_for_previous_kernel();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += gridDim.x * blockDim.x) {
    const int c = int((i / unsigned(HW)) % unsigned(C));
    const float s = inv_std ? inv_std[c] : batchnorm_inv_std(var[c], eps);
    y[i] = activate<A>(batchnorm_normalize(x[i], mean[c], s, gamma[c], beta[c]));
  }
}

// dx from dy (through A, from y), x and the channel sums (dbeta = sum g, dgamma = sum g * xhat).
template <Activation A>
__global__ void batchnorm_input_grad_kernel(unsigned total, int C, int HW, float M,
                                            const float* x, const float* y, const float* dy,
                                            const float* gamma,
                                            const float* save_mean, const float* save_inv_std,
                                            const float* dgamma, const float* dbeta, float* dx) {
  wait_for_previous_kernel();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += gridDim.x * blockDim.x) {
    const int c = int((i / unsigned(HW)) % unsigned(C));
    const float inv_std = save_inv_std[c];
    dx[i] = batchnorm_input_grad(act_grad<A>(dy, y, i), (x[i] - save_mean[c]) * inv_std,
                                 dbeta[c] / M, dgamma[c] / M, gamma[c], inv_std);
  }
}

}  // namespace

}  // namespace cuda

namespace {

// The launch shapes of one batch-norm op: per-channel sums over `shares` blocks a channel (their
// double2 partials in the float scratch, 4 floats each, sized by the eager first step; a counter
// per channel) and a grid-stride element-wise pass (32-bit indices).
struct BatchnormLaunch {
  dim3 sums;
  double2* partial = nullptr;
  unsigned* counters = nullptr;
  int elementwise_blocks = 0;
  unsigned total = 0;
};

BatchnormLaunch batchnorm_launch(cuda::CudaContext& ctx, int N, int C, int HW, bool sums) {
  const size_t total = size_t(N) * C * HW;
  if (total > 0xffffffffu - 2u * 1024u * 1024u)
    throw std::runtime_error("cuda batchnorm: tensor of " + std::to_string(total) +
                             " values is larger than this kernel's 32-bit indexing");
  BatchnormLaunch l;
  l.total = unsigned(total);
  l.elementwise_blocks = cuda::grid_for(total, cuda::kThreads, ctx.sm_count());
  if (sums) {
    const int shares = cuda::image_shares(N, C, HW, ctx.sm_count());
    l.sums = dim3(shares, C);
    l.partial = reinterpret_cast<double2*>(ctx.scratch(size_t(C) * shares * 4));
    l.counters = ctx.counters(size_t(C));
  }
  return l;
}

}  // namespace

void CudaBackend::batchnorm_forward_train(
    int N, int C, int HW, Activation act, float eps, float momentum, const float* x,
    const float* gamma, const float* beta, float* y, float* save_mean, float* save_inv_std,
    float* running_mean, float* running_var) {
  ctx_.bind();
  if (size_t(N) * C * HW == 0) return;
  const BatchnormLaunch l = batchnorm_launch(ctx_, N, C, HW, true);
  cuda::launch(ctx_, "batchnorm_stats_kernel", cuda::batchnorm_stats_kernel, l.sums, cuda::kThreads,
               0, N, C, HW, eps, momentum, x, l.partial, l.counters, save_mean, save_inv_std,
               running_mean, running_var);
  dispatch_activation(act, [&](auto tag) {
    cuda::launch(ctx_, "batchnorm_apply_kernel", cuda::batchnorm_apply_kernel<decltype(tag)::value>,
                 l.elementwise_blocks, cuda::kThreads, 0, l.total, C, HW, eps, x, gamma, beta,
                 save_mean, save_inv_std, nullptr, y);
  });
}

void CudaBackend::batchnorm_forward_infer(
    int N, int C, int HW, Activation act, float eps, const float* x, const float* gamma,
    const float* beta, const float* running_mean, const float* running_var, float* y) {
  ctx_.bind();
  if (size_t(N) * C * HW == 0) return;
  const BatchnormLaunch l = batchnorm_launch(ctx_, N, C, HW, false);
  dispatch_activation(act, [&](auto tag) {
    cuda::launch(ctx_, "batchnorm_apply_kernel", cuda::batchnorm_apply_kernel<decltype(tag)::value>,
                 l.elementwise_blocks, cuda::kThreads, 0, l.total, C, HW, eps, x, gamma, beta,
                 running_mean, nullptr, running_var, y);
  });
}

void CudaBackend::batchnorm_backward(
    int N, int C, int HW, Activation act, const float* x, const float* y, const float* dy,
    const float* gamma, const float* save_mean, const float* save_inv_std, float* dx, float* dgamma,
    float* dbeta) {
  ctx_.bind();
  if (size_t(N) * C * HW == 0) return;
  const BatchnormLaunch l = batchnorm_launch(ctx_, N, C, HW, true);
  dispatch_activation(act, [&](auto tag) {
    constexpr Activation A = decltype(tag)::value;
    cuda::launch(ctx_, "batchnorm_grad_sums_kernel", cuda::batchnorm_grad_sums_kernel<A>, l.sums,
                 cuda::kThreads, 0, N, C, HW, x, y, dy, save_mean, save_inv_std, l.partial,
                 l.counters, dgamma, dbeta);
    if (dx == nullptr) return;
    cuda::launch(ctx_, "batchnorm_input_grad_kernel", cuda::batchnorm_input_grad_kernel<A>,
                 l.elementwise_blocks, cuda::kThreads, 0, l.total, C, HW,
                 float(static_cast<long long>(N) * HW), x, y, dy, gamma, save_mean, save_inv_std,
                 dgamma, dbeta, dx);
  });
}

}  // namespace pcnn
