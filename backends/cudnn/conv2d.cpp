// cudnn convolutions: descriptors per shape, an algorithm per shape and direction chosen on first
// use and cached, and the forward / backward-data / backward-filter calls.
#include <algorithm>
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

void CudnnBackend::choose_forward(const Conv2dShape& s, vendor::ConvPlan& p) {
  reset_search_math(p.conv, allow_tf32_);
  int max_count = 0;
  PCNN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(dnn_, &max_count));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_count, 1));
  int returned = 0;
  const bool timed = search_algorithms();
  if (timed) {
    PCNN_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(dnn_, p.x, p.w, p.conv, p.y, max_count,
                                                          &returned, perf.data()));
  } else {
    PCNN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(dnn_, p.x, p.w, p.conv, p.y,
                                                            max_count, &returned, perf.data()));
  }
  settle(p.forward, candidates(perf.data(), returned, timed, allow_tf32_, allow_transforms_), p.conv, allow_tf32_,
         [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
           return cudnnGetConvolutionForwardWorkspaceSize(dnn_, p.x, p.w, p.conv, p.y, algo,
                                                          bytes);
         },
         "forward", s);
  ensure_workspace(p.forward.workspace);
}

void CudnnBackend::choose_backward_data(const Conv2dShape& s, vendor::ConvPlan& p) {
  reset_search_math(p.conv, allow_tf32_);
  int max_count = 0;
  PCNN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(dnn_, &max_count));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(max_count, 1));
  int returned = 0;
  const bool timed = search_algorithms();
  if (timed) {
    PCNN_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(dnn_, p.w, p.y, p.conv, p.x,
                                                               max_count, &returned,
                                                               perf.data()));
  } else {
    PCNN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(dnn_, p.w, p.y, p.conv, p.x,
                                                                 max_count, &returned,
                                                                 perf.data()));
  }
  settle(p.backward_data, candidates(perf.data(), returned, timed, allow_tf32_, allow_transforms_), p.conv,
         allow_tf32_,
         [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
           return cudnnGetConvolutionBackwardDataWorkspaceSize(dnn_, p.w, p.y, p.conv, p.x, algo,
                                                               bytes);
         },
         "backward-data", s);
  ensure_workspace(p.backward_data.workspace);
}

void CudnnBackend::choose_backward_filter(const Conv2dShape& s, vendor::ConvPlan& p) {
  reset_search_math(p.conv, allow_tf32_);
  int max_count = 0;
  PCNN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(dnn_, &max_count));
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(std::max(max_count, 1));
  int returned = 0;
  const bool timed = search_algorithms();
  if (timed) {
    PCNN_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(dnn_, p.x, p.y, p.conv, p.w,
                                                                 max_count, &returned,
                                                                 perf.data()));
  } else {
    PCNN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(dnn_, p.x, p.y, p.conv, p.w,
                                                                   max_count, &returned,
                                                                   perf.data()));
  }
  settle(p.backward_filter, candidates(perf.data(), returned, timed, allow_tf32_, allow_transforms_), p.conv,
         allow_tf32_,
         [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
           return cudnnGetConvolutionBackwardFilterWorkspaceSize(dnn_, p.x, p.y, p.conv, p.w,
                                                                 algo, bytes);
         },
         "backward-filter", s);
  ensure_workspace(p.backward_filter.workspace);
}

// x (N,C,H,W), w (K,C,R,S), b (K) -> y (N,K,P,Q) = conv(x, w) + b
void CudnnBackend::conv2d_forward(const Conv2dShape& s, const float* x, const float* w,
                                  const float* b, float* y) {
  if (s.N == 0) return;
  vendor::ConvPlan& p = conv_plan(s);
  if (!p.forward.chosen) choose_forward(s, p);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnSetConvolutionMathType(p.conv, p.forward.math));
  PCNN_CUDNN_CHECK(cudnnConvolutionForward(dnn_, &one, p.x, x, p.w, w, p.conv, p.forward.algo,
                                           workspace_, workspace_bytes_, &zero, p.y, y));
  if (b) PCNN_CUDNN_CHECK(cudnnAddTensor(dnn_, &one, p.bias, b, &one, p.y, y));
}

// dy (N,K,P,Q), w (K,C,R,S) -> dx (N,C,H,W)
void CudnnBackend::conv2d_backward_data(const Conv2dShape& s, const float* dy, const float* w,
                                        float* dx) {
  if (s.N == 0) return;
  vendor::ConvPlan& p = conv_plan(s);
  if (!p.backward_data.chosen) choose_backward_data(s, p);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnSetConvolutionMathType(p.conv, p.backward_data.math));
  PCNN_CUDNN_CHECK(cudnnConvolutionBackwardData(dnn_, &one, p.w, w, p.y, dy, p.conv,
                                                p.backward_data.algo, workspace_,
                                                workspace_bytes_, &zero, p.x, dx));
}

// x (N,C,H,W), dy (N,K,P,Q) -> dw (K,C,R,S), db (K) = sum of dy over N, P, Q
void CudnnBackend::conv2d_backward_weights(const Conv2dShape& s, const float* x, const float* dy,
                                           float* dw, float* db) {
  if (s.N == 0) {  // no samples: the gradients are zero, as serial leaves them
    fill(dw, 0.f, s.w_size());
    if (db) fill(db, 0.f, size_t(s.K));
    return;
  }
  vendor::ConvPlan& p = conv_plan(s);
  if (!p.backward_filter.chosen) choose_backward_filter(s, p);
  const float one = 1.f, zero = 0.f;
  PCNN_CUDNN_CHECK(cudnnSetConvolutionMathType(p.conv, p.backward_filter.math));
  PCNN_CUDNN_CHECK(cudnnConvolutionBackwardFilter(dnn_, &one, p.x, x, p.y, dy, p.conv,
                                                  p.backward_filter.algo, workspace_,
                                                  workspace_bytes_, &zero, p.w, dw));
  if (db) bias_backward(s.N, s.K, s.P() * s.Q(), dy, db);
}

}  // namespace pcnn
