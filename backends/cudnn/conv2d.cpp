// cudnn convolutions: descriptors per shape, an algorithm per shape and direction chosen on first
// use and cached, the forward / backward-data / backward-filter calls, and the fused convolution
// ops kept composed of them.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "backends/cudnn/cudnn_backend.hpp"

namespace pcnn {

namespace {

// No algorithm may ask for more than this: a huge FFT workspace is not worth the memory.
constexpr size_t kMaxWorkspaceBytes = size_t(1) << 30;

// A deterministic algorithm this close to the fastest is taken instead: same bits every run.
constexpr float kDeterministicSlack = 1.1f;

bool tensor_op(cudnnMathType_t m) {
  return m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// Algorithms that go through a transform (FFT, Winograd): FP32 error far above a direct sum's.
bool transform(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool transform(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool transform(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// Candidates in the order to try them: results usable here (succeeded, workspace under the cap,
// no tensor-op math unless TF32 is allowed, no transform algorithm unless allowed), best first.
// Timed results come sorted by time; a deterministic one within kDeterministicSlack of the
// fastest moves to the front.
template <class Perf>
std::vector<Perf> candidates(const Perf* perf, int count, bool timed, bool allow_tf32,
                             bool allow_transforms) {
  std::vector<Perf> usable;
  for (int i = 0; i < count; ++i) {
    const Perf& r = perf[i];
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > kMaxWorkspaceBytes) continue;
    if (!allow_tf32 && tensor_op(r.mathType)) continue;
    if (!allow_transforms && transform(r.algo)) continue;
    usable.push_back(r);
  }
  if (timed && !usable.empty() && usable.front().determinism != CUDNN_DETERMINISTIC) {
    const float limit = usable.front().time * kDeterministicSlack;
    for (size_t i = 1; i < usable.size() && usable[i].time <= limit; ++i)
      if (usable[i].determinism == CUDNN_DETERMINISTIC) {
        std::rotate(usable.begin(), usable.begin() + i, usable.begin() + i + 1);
        break;
      }
  }
  return usable;
}

// cudnnFind times each algorithm once, and for kernels of a few tens of microseconds one timing
// is noise: two algorithms 5 % apart swapped places between runs (Simard 2003's conv2 backward
// data on the H200: the step 5-10 % slower on the run that took the worse one). The search is
// repeated and each algorithm (with its math type) is ranked by its median time.
constexpr int kFindRounds = 5;

template <class Perf>
std::vector<Perf> median_ranking(const std::vector<std::vector<Perf>>& rounds) {
  std::vector<Perf> merged;
  std::vector<std::vector<float>> times;
  for (const auto& round : rounds)
    for (const Perf& r : round) {
      if (r.status != CUDNN_STATUS_SUCCESS) continue;
      size_t i = 0;
      while (i < merged.size() && !(merged[i].algo == r.algo && merged[i].mathType == r.mathType))
        ++i;
      if (i == merged.size()) {
        merged.push_back(r);
        times.emplace_back();
      }
      merged[i].memory = std::max(merged[i].memory, r.memory);
      times[i].push_back(r.time);
    }
  for (size_t i = 0; i < merged.size(); ++i) {
    auto& t = times[i];
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    merged[i].time = t[t.size() / 2];
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const Perf& a, const Perf& b) { return a.time < b.time; });
  return merged;
}

// The math type the search runs under: an earlier direction's choice may have left another.
void reset_search_math(cudnnConvolutionDescriptor_t conv, bool allow_tf32) {
  PCNN_CUDNN_CHECK(
      cudnnSetConvolutionMathType(conv, allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
}

std::string describe(const Conv2dShape& s) {
  std::ostringstream os;
  os << "x(" << s.N << "," << s.C << "," << s.H << "," << s.W << ") w(" << s.K << "," << s.C
     << "," << s.R << "," << s.S << ") stride " << s.stride << " pad " << s.pad;
  return os.str();
}

// The first candidate cuDNN accepts with the math type we will run it with; records it in c.
// workspace_size(algo, &bytes) asks cuDNN for that algorithm's exact need (and whether it is
// supported at all with this math type).
template <class Choice, class Perf, class WorkspaceSize>
void settle(Choice& c, const std::vector<Perf>& usable, cudnnConvolutionDescriptor_t conv,
            bool allow_tf32, WorkspaceSize workspace_size, const char* direction,
            const Conv2dShape& s) {
  for (const Perf& r : usable) {
    const cudnnMathType_t math = allow_tf32 ? r.mathType : CUDNN_FMA_MATH;
    PCNN_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, math));
    size_t bytes = 0;
    if (workspace_size(r.algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    c.algo = r.algo;
    c.math = math;
    c.workspace = std::max(bytes, r.memory);
    c.chosen = true;
    return;
  }
  throw Error(std::string("cudnn: no usable ") + direction + " convolution algorithm for " +
              describe(s));
}

// The three directions' cuDNN calls, written once. A row: X(the direction in cuDNN's names, its
// perf-result type, the plan member holding its choice, the four descriptors in the order its
// calls take them). Each row becomes one overload set, picked by the result type, so one search
// (CudnnBackend::choose) serves all three directions.
#define PCNN_CUDNN_CONV_DIRECTIONS(X)                                                          \
  X(Forward, cudnnConvolutionFwdAlgoPerf_t, forward, p.x, p.w, p.conv, p.y)                    \
  X(BackwardData, cudnnConvolutionBwdDataAlgoPerf_t, backward_data, p.w, p.y, p.conv, p.x)     \
  X(BackwardFilter, cudnnConvolutionBwdFilterAlgoPerf_t, backward_filter, p.x, p.y, p.conv, p.w)

#define PCNN_CUDNN_DIRECTION_CALLS(Dir, Perf, member, d0, d1, d2, d3)                           \
  const char* direction_name(const Perf*) { return #member; }                                  \
  auto& choice_of(vendor::ConvPlan& p, const Perf*) { return p.member; }                       \
  void algo_count(cudnnHandle_t h, const Perf*, int* n) {                                      \
    PCNN_CUDNN_CHECK(cudnnGetConvolution##Dir##AlgorithmMaxCount(h, n));                       \
  }                                                                                            \
  /* Timed: cuDNN runs every algorithm once. */                                               \
  void find_algos(cudnnHandle_t h, const vendor::ConvPlan& p, int n, int* got, Perf* perf) {   \
    PCNN_CUDNN_CHECK(cudnnFindConvolution##Dir##Algorithm(h, d0, d1, d2, d3, n, got, perf));   \
  }                                                                                            \
  /* Ranked by cuDNN's heuristics: nothing runs, so it is safe while capturing. */            \
  void rank_algos(cudnnHandle_t h, const vendor::ConvPlan& p, int n, int* got, Perf* perf) {   \
    PCNN_CUDNN_CHECK(cudnnGetConvolution##Dir##Algorithm_v7(h, d0, d1, d2, d3, n, got, perf)); \
  }                                                                                            \
  cudnnStatus_t workspace_size(cudnnHandle_t h, const vendor::ConvPlan& p,                     \
                               decltype(Perf::algo) algo, size_t* bytes) {                     \
    return cudnnGetConvolution##Dir##WorkspaceSize(h, d0, d1, d2, d3, algo, bytes);            \
  }
PCNN_CUDNN_CONV_DIRECTIONS(PCNN_CUDNN_DIRECTION_CALLS)
#undef PCNN_CUDNN_DIRECTION_CALLS
#undef PCNN_CUDNN_CONV_DIRECTIONS

}  // namespace

vendor::ConvPlan& CudnnBackend::conv_plan(const Conv2dShape& s) {
  const ConvKey key{s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.stride, s.pad};
  const auto found = conv_plans_.find(key);
  if (found != conv_plans_.end()) return *found->second;

  PCNN_CHECK(s.N > 0 && s.C > 0 && s.K > 0 && s.stride > 0 && s.pad >= 0 && s.P() > 0 &&
                 s.Q() > 0,
             "cudnn conv2d: invalid shape " << describe(s));
  auto p = std::make_unique<vendor::ConvPlan>();
  vendor::set_nchw(p->x, s.N, s.C, s.H, s.W);
  vendor::set_nchw(p->y, s.N, s.K, s.P(), s.Q());
  vendor::set_nchw(p->bias, 1, s.K, 1, 1);
  PCNN_CUDNN_CHECK(
      cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.K, s.C, s.R, s.S));
  // Cross-correlation (no filter flip), as serial's im2col computes it.
  PCNN_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(p->conv, s.pad, s.pad, s.stride, s.stride, 1,
                                                   1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  int n = 0, c = 0, h = 0, w = 0;
  PCNN_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, &n, &c, &h, &w));
  PCNN_CHECK(n == s.N && c == s.K && h == s.P() && w == s.Q(),
             "cudnn conv2d: cuDNN's output (" << n << "," << c << "," << h << "," << w
                                              << ") differs from the contract's for "
                                              << describe(s));
  return *conv_plans_.emplace(key, std::move(p)).first->second;
}

template <class Perf>
void CudnnBackend::choose(const Conv2dShape& s, vendor::ConvPlan& p) {
  const Perf* direction = nullptr;  // picks the overloads of the direction table
  reset_search_math(p.conv, allow_tf32_);
  int max_count = 0;
  algo_count(dnn(), direction, &max_count);
  std::vector<Perf> perf(std::max(max_count, 1));
  int returned = 0;
  const bool timed = search_algorithms();
  if (timed) {
    std::vector<std::vector<Perf>> rounds;
    for (int round = 0; round < kFindRounds; ++round) {
      find_algos(dnn(), p, max_count, &returned, perf.data());
      rounds.emplace_back(perf.begin(), perf.begin() + returned);
    }
    perf = median_ranking(rounds);
    returned = int(perf.size());
  } else {
    rank_algos(dnn(), p, max_count, &returned, perf.data());
  }
  auto& choice = choice_of(p, direction);
  settle(choice, candidates(perf.data(), returned, timed, allow_tf32_, allow_transforms_), p.conv,
         allow_tf32_,
         [&](decltype(Perf::algo) algo, size_t* bytes) {
           return workspace_size(dnn(), p, algo, bytes);
         },
         direction_name(direction), s);
  if (log_choices_)
    std::fprintf(stderr, "cudnn: %s %s -> algorithm %d (math %d, workspace %zu B, %s)\n",
                 direction_name(direction), describe(s).c_str(), int(choice.algo),
                 int(choice.math), choice.workspace,
                 timed ? "median of the timed searches" : "heuristic");
  workspace_.ensure(choice.workspace);
}

template <class Perf>
const vendor::ConvPlan& CudnnBackend::plan_for(const Conv2dShape& s) {
  vendor::ConvPlan& p = conv_plan(s);
  const auto& choice = choice_of(p, static_cast<const Perf*>(nullptr));
  if (!choice.chosen) choose<Perf>(s, p);
  PCNN_CUDNN_CHECK(cudnnSetConvolutionMathType(p.conv, choice.math));
  return p;
}

// x (N,C,H,W), w (K,C,R,S), b (K) -> y (N,K,P,Q) = conv(x, w) + b
void CudnnBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                  const float* b, float* y) {
  context().bind();
  if (s.N == 0) return;
  const vendor::ConvPlan& p = plan_for<cudnnConvolutionFwdAlgoPerf_t>(s);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnConvolutionForward(dnn(), &one, p.x, x, p.w, w, p.conv, p.forward.algo,
                                           workspace_.get(), workspace_.bytes(), &zero, p.y, y));
  if (b) PCNN_CUDNN_CHECK(cudnnAddTensor(dnn(), &one, p.bias, b, &one, p.y, y));
}

// dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W)
void CudnnBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                        float* dx) {
  context().bind();
  if (s.N == 0) return;
  const vendor::ConvPlan& p = plan_for<cudnnConvolutionBwdDataAlgoPerf_t>(s);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnConvolutionBackwardData(dnn(), &one, p.w, w, p.y, dy, p.conv,
                                                p.backward_data.algo, workspace_.get(),
                                                workspace_.bytes(), &zero, p.x, dx));
}

// x (N,C,H,W), dy (N,K,P,Q) -> dw (K,C,R,S), db (K) = sum of dy over N, P, Q
void CudnnBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x, const float* dy,
                                           float* dw, float* db) {
  context().bind();
  if (s.N == 0) {  // no samples: the gradients are zero, as serial leaves them
    fill(dw, 0.f, s.w_size());
    if (db) fill(db, 0.f, size_t(s.K));
    return;
  }
  const vendor::ConvPlan& p = plan_for<cudnnConvolutionBwdFilterAlgoPerf_t>(s);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnConvolutionBackwardFilter(dnn(), &one, p.x, x, p.y, dy, p.conv,
                                                  p.backward_filter.algo, workspace_.get(),
                                                  workspace_.bytes(), &zero, p.w, dw));
  if (db) bias_backward(s.N, s.K, s.P() * s.Q(), dy, db);
}

// The fused convolution stays composed of the library calls above, with the base's activation
// kernels in between (Backend's default), not the cuda base's fused kernels: the head-to-head
// with cuda then compares library kernels with hand-written ones. Its max pooling keeps one-byte
// indices as every backend's does, which cuDNN's pooling cannot write: that pooling and its
// backward are the cuda base's kernels (pool2d.cpp).
void CudnnBackend::conv2d_fused_forward(const Conv2dShape& s, const ConvEpilogue& epi,
                                        const float* x, const float* w, const float* b,
                                        const ConvKept& kept, float* scratch, float* y) {
  Backend::conv2d_fused_forward(s, epi, x, w, b, kept, scratch, y);
}

void CudnnBackend::conv2d_fused_backward(const Conv2dShape& s, const ConvEpilogue& epi,
                                         const float* x, const float* w, const ConvKept& kept,
                                         const float* y, const float* dy, float* scratch, float* dx,
                                         float* dw, float* db) {
  Backend::conv2d_fused_backward(s, epi, x, w, kept, y, dy, scratch, dx, dw, db);
}

// 16 bits: widen, the library path above, round (Backend's default), not the cuda base's native
// kernels.
void CudnnBackend::conv2d_fused_forward_16(Precision p, const Conv2dShape& s,
                                           const ConvEpilogue& epi, const uint16_t* x,
                                           const float* x32, const float* w, const float* b,
                                           const ConvKept& kept, float* scratch, float* staging,
                                           uint16_t* y) {
  Backend::conv2d_fused_forward_16(p, s, epi, x, x32, w, b, kept, scratch, staging, y);
}

void CudnnBackend::conv2d_fused_backward_16(Precision p, const Conv2dShape& s,
                                            const ConvEpilogue& epi, const uint16_t* x,
                                            const float* x32, const float* w,
                                            const ConvKept& kept, const uint16_t* y,
                                            const uint16_t* dy, float* scratch, float* staging,
                                            uint16_t* dx, float* dw, float* db) {
  Backend::conv2d_fused_backward_16(p, s, epi, x, x32, w, kept, y, dy, scratch, staging, dx, dw,
                                    db);
}

}  // namespace pcnn
