// The ONNX operators the conformance cases test, each mapped onto pcnn's backend ops, and the
// rules that turn a case pcnn cannot express into a skip reason. The table (kOps) at the end is
// the one place a newly added pcnn op gets its mapper.
#include "tests/onnx/mapping.hpp"

#include <algorithm>
#include <sstream>

#include "backends/device_array.hpp"
#include "core/check.hpp"
#include "tests/compare.hpp"
#include "tests/onnx/attrs.hpp"

namespace pcnn::test::onnx {

namespace {

using Inputs = std::vector<const Tensor*>;

Plan skip(std::string why) {
  Plan p;
  p.skip = std::move(why);
  return p;
}

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = shape_text(v);
  return s.substr(1, s.size() - 2);
}

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t k = from; k < to; ++k) n *= dims[k];
  return n;
}

// The input at k, or nullptr when the node leaves it out.
const Tensor* optional_input(const Inputs& in, size_t k) { return k < in.size() ? in[k] : nullptr; }

// ---- pooling -------------------------------------------------------------------------------
// pcnn's pool2d_forward pads every side the same (Pool2dShape::pad < window) and never reads the
// padding: max ignores it, average divides by the in-image count, i.e. ONNX's
// count_include_pad = 0. A padded average that counts the padding (1) skips.
Plan map_pool(PoolKind kind, const Node& n, const Inputs& in) {
  Attrs a(n);
  const Tensor& x = *in[0];
  if (x.dims.size() != 4)
    return skip("input of shape " + shape_text(x.dims) + ": pcnn pools 2-D images (N,C,H,W)");
  const std::vector<int64_t> k = a.ints("kernel_shape", {});
  if (k.size() != 2 || k[0] != k[1])
    return skip(attribute_reason("kernel_shape", ints_text(k), "pcnn's windows are square"));
  const std::vector<int64_t> strides = a.ints("strides", {1, 1});
  if (strides.size() != 2 || strides[0] != strides[1])
    return skip(attribute_reason("strides", ints_text(strides), "one stride for both axes"));
  if (kind == PoolKind::Max) {
    const std::vector<int64_t> dil = a.ints("dilations", {1, 1});
    if (dil != std::vector<int64_t>{1, 1})
      return skip(attribute_reason("dilations", ints_text(dil), "pcnn's windows are dense"));
    a.i("storage_order", 0);  // the layout of the Indices output, which pcnn does not give
  }
  const int64_t ceil_mode = a.i("ceil_mode", 0);
  if (ceil_mode != 0)
    return skip(attribute_reason("ceil_mode", "1", "pcnn rounds the output size down"));
  const int64_t count_pad = kind == PoolKind::Avg ? a.i("count_include_pad", 0) : 0;
  int pad = 0;
  const std::string why = symmetric_pad(a, &x.dims[2], k.data(), strides[0], pad);
  if (!why.empty()) return skip(why);
  const std::string unread = a.unread();
  if (!unread.empty()) return skip(unread);

  Pool2dShape s;
  s.N = int(x.dims[0]);
  s.C = int(x.dims[1]);
  s.H = int(x.dims[2]);
  s.W = int(x.dims[3]);
  s.window = int(k[0]);
  s.stride = int(strides[0]);
  if (pad != 0) {
    if (kind == PoolKind::Avg && count_pad != 0)
      return skip(attribute_reason("count_include_pad", std::to_string(count_pad),
                                   "pcnn's padded average divides by the in-image count"));
    if (pad >= s.window)
      return skip("pad " + std::to_string(pad) + " of a window of " + std::to_string(s.window) +
                  ": pcnn's pad is smaller than the window");
    s.pad = pad;
  }
  if (s.P() < 1 || s.Q() < 1) return skip("window larger than the input");
  Plan p;
  p.dims = {s.N, s.C, s.P(), s.Q()};
  p.run = [kind, s, xv = x.floats](Backend& be) {
    DeviceArray<float> dx(be, xv);
    DeviceArray<float> y = poisoned(be, s.y_size());
    be.pool2d_forward(kind, s, dx.get(), y.get(), nullptr);
    return y.download();
  };
  return p;
}

template <PoolKind K>
Plan map_pool_of(const Node& n, const Inputs& in, int64_t) {
  return map_pool(K, n, in);
}

// ---- global average pooling ----------------------------------------------------------------
// x (N,C,D1,...) -> y (N,C,1,...): global_avg_pool_forward over the HW = D1*... values of a plane.
Plan map_global_avg_pool(const Node& n, const Inputs& in, int64_t) {
  Attrs a(n);
  const std::string unread = a.unread();
  if (!unread.empty()) return skip(unread);
  const Tensor& x = *in[0];
  if (x.dims.size() < 3) return skip("input of shape " + shape_text(x.dims) + ": no spatial axis");
  const int N = int(x.dims[0]), C = int(x.dims[1]);
  const int HW = int(product(x.dims, 2, x.dims.size()));
  if (HW < 1) return skip("input of shape " + shape_text(x.dims) + ": an empty plane");
  Plan p;
  p.dims = x.dims;
  std::fill(p.dims.begin() + 2, p.dims.end(), 1);
  p.run = [N, C, HW, xv = x.floats](Backend& be) {
    DeviceArray<float> dx(be, xv);
    DeviceArray<float> y = poisoned(be, size_t(N) * C);
    be.global_avg_pool_forward(N, C, HW, dx.get(), y.get());
    return y.download();
  };
  return p;
}

// ---- batch normalization -------------------------------------------------------------------
// Inference mode: y = scale * (x - mean) / sqrt(var + epsilon) + B per channel of x (N,C,D1,...),
// batchnorm_forward_infer with the given statistics as the running ones. Training mode gives
// three outputs and skips in plan_case (kOps' reason).
Plan map_batchnorm(const Node& n, const Inputs& in, int64_t) {
  Attrs a(n);
  const float eps = a.f("epsilon", 1e-5f);
  a.f("momentum", 0.9f);  // only updates running statistics, which inference mode leaves alone
  const int64_t training = a.i("training_mode", 0);
  if (training != 0)
    return skip(attribute_reason("training_mode", std::to_string(training),
                                 "mapped in inference mode only"));
  const std::string unread = a.unread();
  if (!unread.empty()) return skip(unread);
  if (in.size() < 5) return skip("inputs scale, B, mean, var not all given");
  const Tensor& x = *in[0];
  if (x.dims.size() < 2) return skip("input of shape " + shape_text(x.dims) + ": no channel axis");
  const int N = int(x.dims[0]), C = int(x.dims[1]);
  const int HW = int(product(x.dims, 2, x.dims.size()));
  for (size_t k = 1; k < 5; ++k)
    if (!in[k] || in[k]->dims != std::vector<int64_t>{C})
      return skip("input " + n.inputs[k] + " of shape " +
                  (in[k] ? shape_text(in[k]->dims) : std::string("(none)")) + ", not (C)");
  Plan p;
  p.dims = x.dims;
  p.run = [N, C, HW, eps, xv = x.floats, g = in[1]->floats, b = in[2]->floats,
           m = in[3]->floats, v = in[4]->floats](Backend& be) {
    DeviceArray<float> dx(be, xv), dg(be, g), db(be, b), dm(be, m), dv(be, v);
    DeviceArray<float> y = poisoned(be, xv.size());
    be.batchnorm_forward_infer(N, C, HW, Activation::None, eps, dx.get(), dg.get(), db.get(), dm.get(), dv.get(),
                               y.get());
    return y.download();
  };
  return p;
}

// ---- convolution ---------------------------------------------------------------------------
Plan map_conv(const Node& n, const Inputs& in, int64_t) {
  Attrs a(n);
  if (in.size() < 2 || !in[1]) return skip("no weights input");
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor* b = optional_input(in, 2);
  if (x.dims.size() != 4 || w.dims.size() != 4)
    return skip("input of shape " + shape_text(x.dims) + ": pcnn convolves 2-D images (N,C,H,W)");
  const int64_t group = a.i("group", 1);
  if (group != 1)
    return skip(attribute_reason("group", std::to_string(group), "no grouped convolution"));
  const std::vector<int64_t> dil = a.ints("dilations", {1, 1});
  if (dil != std::vector<int64_t>{1, 1})
    return skip(attribute_reason("dilations", ints_text(dil), "no dilated convolution"));
  const std::vector<int64_t> strides = a.ints("strides", {1, 1});
  if (strides.size() != 2 || strides[0] != strides[1])
    return skip(attribute_reason("strides", ints_text(strides), "one stride for both axes"));
  const std::vector<int64_t> k = a.ints("kernel_shape", {w.dims[2], w.dims[3]});
  if (k != std::vector<int64_t>{w.dims[2], w.dims[3]})
    return skip(attribute_reason("kernel_shape", ints_text(k), "differs from the weights"));
  int pad = 0;
  const std::string why = symmetric_pad(a, &x.dims[2], k.data(), strides[0], pad);
  if (!why.empty()) return skip(why);
  const std::string unread = a.unread();
  if (!unread.empty()) return skip(unread);
  if (w.dims[1] != x.dims[1] || (b && b->count() != size_t(w.dims[0])))
    return skip("weights " + shape_text(w.dims) + " do not fit input " + shape_text(x.dims));

  Conv2dShape s;
  s.N = int(x.dims[0]);
  s.C = int(x.dims[1]);
  s.H = int(x.dims[2]);
  s.W = int(x.dims[3]);
  s.K = int(w.dims[0]);
  s.R = int(w.dims[2]);
  s.S = int(w.dims[3]);
  s.stride = int(strides[0]);
  s.pad = pad;
  Plan p;
  p.dims = {s.N, s.K, s.P(), s.Q()};
  p.run = [s, xv = x.floats, wv = w.floats,
           bv = b ? b->floats : std::vector<float>{}](Backend& be) {
    DeviceArray<float> dx(be, xv), dw(be, wv), db;
    if (!bv.empty()) db = DeviceArray<float>(be, bv);  // no zero-byte copies to a device
    DeviceArray<float> y = poisoned(be, s.y_size());
    be.conv2d_forward(s, dx.get(), dw.get(), bv.empty() ? nullptr : db.get(), y.get());
    return y.download();
  };
  return p;
}

// ---- Gemm ----------------------------------------------------------------------------------
// How C (unidirectionally broadcast to (M,N)) reaches the output.
enum class Bias { None, Full, Row, Column, Scalar };

Plan map_gemm(const Node& n, const Inputs& in, int64_t) {
  Attrs a(n);
  const float alpha = a.f("alpha", 1.f), beta = a.f("beta", 1.f);
  const bool ta = a.i("transA", 0) != 0, tb = a.i("transB", 0) != 0;
  const std::string unread = a.unread();
  if (!unread.empty()) return skip(unread);
  if (in.size() < 2 || !in[1]) return skip("no B input");
  const Tensor& A = *in[0];
  const Tensor& B = *in[1];
  const Tensor* C = optional_input(in, 2);
  if (A.dims.size() != 2 || B.dims.size() != 2)
    return skip("A " + shape_text(A.dims) + ", B " + shape_text(B.dims) + ": not matrices");
  const int M = int(ta ? A.dims[1] : A.dims[0]), K = int(ta ? A.dims[0] : A.dims[1]);
  const int N = int(tb ? B.dims[0] : B.dims[1]);
  if ((tb ? B.dims[1] : B.dims[0]) != K)
    return skip("A " + shape_text(A.dims) + " and B " + shape_text(B.dims) + " do not multiply");
  Bias bias = Bias::None;
  if (C && beta != 0.f) {
    if (C->dims.size() > 2) return skip("C of shape " + shape_text(C->dims) + ": rank above 2");
    const int64_t c0 = C->dims.size() == 2 ? C->dims[0] : 1;
    const int64_t c1 = C->dims.empty() ? 1 : C->dims.back();
    if (c0 == M && c1 == N)
      bias = Bias::Full;
    else if (c0 == 1 && c1 == N)
      bias = Bias::Row;
    else if (c0 == M && c1 == 1)
      bias = Bias::Column;
    else if (c0 == 1 && c1 == 1)
      bias = Bias::Scalar;
    else
      return skip("C of shape " + shape_text(C->dims) + " does not broadcast to (M,N)");
  }
  std::vector<float> c = C ? C->floats : std::vector<float>{};
  // bias_add adds C unscaled: with beta != 1 a broadcast C is laid out as (M,N) on the host (a
  // copy, no arithmetic) and scaled by gemm's beta instead.
  if (bias != Bias::None && bias != Bias::Full && beta != 1.f) {
    std::vector<float> full(size_t(M) * N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        full[size_t(i) * N + j] = c[bias == Bias::Row ? j : bias == Bias::Column ? i : 0];
    c = std::move(full);
    bias = Bias::Full;
  }
  const int lda = int(A.dims[1]), ldb = int(B.dims[1]);
  Plan p;
  p.dims = {M, N};
  p.run = [=, av = A.floats, bv = B.floats](Backend& be) {
    DeviceArray<float> da(be, av), db(be, bv), dc;
    if (bias != Bias::None && bias != Bias::Full) dc = DeviceArray<float>(be, c);
    DeviceArray<float> y =
        bias == Bias::Full ? DeviceArray<float>(be, c) : poisoned(be, size_t(M) * N);
    be.gemm(ta, tb, M, N, K, alpha, da.get(), lda, db.get(), ldb, bias == Bias::Full ? beta : 0.f,
            y.get(), N);
    // y (rows, channels, HW) += c (channels): a row of C is one bias per column, a column of C
    // one per row, a scalar one for every element.
    if (bias == Bias::Row) be.bias_add(M, N, 1, dc.get(), y.get());
    if (bias == Bias::Column) be.bias_add(1, M, N, dc.get(), y.get());
    if (bias == Bias::Scalar) be.bias_add(M * N, 1, 1, dc.get(), y.get());
    return y.download();
  };
  return p;
}

// ---- activations ---------------------------------------------------------------------------
Plan map_activation(Activation act, const Node& n, const Inputs& in) {
  Attrs a(n);
  const std::string unread = a.unread();
  if (!unread.empty()) return skip(unread);
  const Tensor& x = *in[0];
  Plan p;
  p.dims = x.dims;
  p.run = [act, xv = x.floats](Backend& be) {
    DeviceArray<float> dx(be, xv);
    DeviceArray<float> y = poisoned(be, xv.size());
    be.activation_forward(act, xv.size(), dx.get(), y.get());
    return y.download();
  };
  return p;
}

template <Activation A>
Plan map_activation_of(const Node& n, const Inputs& in, int64_t) {
  return map_activation(A, n, in);
}

// ---- softmax and its cross-entropy ---------------------------------------------------------
// Softmax through softmax_cross_entropy, the one op of pcnn that computes it: with every label 0,
// dlogits = (softmax - onehot(0)) / rows, so softmax = rows * dlogits + onehot(0).
Plan map_softmax(const Node& n, const Inputs& in, int64_t opset) {
  Attrs a(n);
  const Tensor& x = *in[0];
  const int64_t rank = int64_t(x.dims.size());
  // Before opset 13 the input is flattened to 2-D at axis (default 1); from 13 on, softmax runs
  // along the one axis (default -1).
  const int64_t given = a.i("axis", opset >= 13 ? -1 : 1);
  const std::string unread = a.unread();
  if (!unread.empty()) return skip(unread);
  const int64_t axis = given < 0 ? given + rank : given;
  if (rank == 0 || axis < 0 || axis >= rank)
    return skip(attribute_reason("axis", std::to_string(given), "outside the input's rank"));
  const int64_t rows = product(x.dims, 0, size_t(axis));
  const int64_t inner = product(x.dims, size_t(axis) + 1, x.dims.size());
  if (opset >= 13 && inner != 1)
    return skip(attribute_reason(
        "axis", std::to_string(given),
        "not the last axis of " + shape_text(x.dims) + "; pcnn's softmax runs along rows"));
  const int64_t K = x.dims[size_t(axis)] * inner;
  Plan p;
  p.dims = x.dims;
  p.run = [rows, K, xv = x.floats](Backend& be) {
    DeviceArray<float> dx(be, xv);
    DeviceArray<int32_t> labels(be, std::vector<int32_t>(size_t(rows), 0));
    DeviceArray<float> dlogits = poisoned(be, xv.size());
    DeviceArray<float> metrics(be, std::vector<float>(kMetricCount, 0.f));
    be.softmax_cross_entropy(int(rows), int(K), dx.get(), labels.get(), dlogits.get(),
                             metrics.get());
    std::vector<float> y = dlogits.download();
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = float(rows) * y[i] + (i % size_t(K) == 0 ? 1.f : 0.f);
    return y;
  };
  return p;
}

Plan map_softmax_cross_entropy(const Node& n, const Inputs& in, int64_t) {
  Attrs a(n);
  const std::string reduction = a.s("reduction", "mean");
  if (a.has("ignore_index"))
    return skip(attribute_reason("ignore_index", std::to_string(a.i("ignore_index", 0)),
                                 "pcnn's loss ignores no label"));
  const std::string unread = a.unread();
  if (!unread.empty()) return skip(unread);
  if (optional_input(in, 2)) return skip("input weights: pcnn's loss has no class weights");
  if (in.size() < 2 || !in[1]) return skip("no labels input");
  const Tensor& x = *in[0];
  const Tensor& labels = *in[1];
  if (x.dims.size() != 2)
    return skip("scores of shape " + shape_text(x.dims) +
                ": pcnn's loss takes (N,C), the classes on the last axis");
  if (reduction != "mean" && reduction != "sum")
    return skip(attribute_reason("reduction", reduction, "pcnn's loss gives the sum over samples"));
  if (labels.type != DataType::Int64 && labels.type != DataType::Int32)
    return skip(std::string("labels of type ") + to_string(labels.type));
  const int64_t N = x.dims[0], K = x.dims[1];
  if (labels.dims != std::vector<int64_t>{N})
    return skip("labels of shape " + shape_text(labels.dims));
  std::vector<int32_t> lv;
  for (int64_t l : labels.ints) {
    if (l < 0 || l >= K) return skip("label " + std::to_string(l) + " outside [0, C)");
    lv.push_back(int32_t(l));
  }
  const bool mean = reduction == "mean";
  Plan p;  // a scalar loss
  p.run = [N, K, mean, lv, xv = x.floats](Backend& be) {
    DeviceArray<float> dx(be, xv);
    DeviceArray<int32_t> dl(be, lv);
    DeviceArray<float> metrics(be, std::vector<float>(kMetricCount, 0.f));
    be.softmax_cross_entropy(int(N), int(K), dx.get(), dl.get(), nullptr, metrics.get());
    const float sum = metrics.download()[kMetricLossSum];
    return std::vector<float>{mean ? sum / float(N) : sum};
  };
  return p;
}

// ---- the table -----------------------------------------------------------------------------
struct OpRow {
  const char* op_type;
  Plan (*map)(const Node&, const Inputs&, int64_t opset);  // nullptr: not in pcnn yet
  int integer_input;  // the input that is integer by design (labels), -1: every input is float
  const char* more_outputs;  // why a case with outputs beyond the first skips; nullptr: generic
};

// ONNX's training mode also outputs the updated running statistics: running = momentum * running
// + (1 - momentum) * batch with the biased batch variance, where pcnn keeps PyTorch's (momentum
// weighs the batch, and the variance is the unbiased one).
constexpr const char* kBatchnormTraining =
    "training_mode 1 (outputs the running statistics; pcnn updates the variance with the unbiased "
    "batch variance, ONNX with the biased one)";

const OpRow kOps[] = {
    {"Conv", map_conv, -1, nullptr},
    {"MaxPool", map_pool_of<PoolKind::Max>, -1, nullptr},
    {"AveragePool", map_pool_of<PoolKind::Avg>, -1, nullptr},
    {"Gemm", map_gemm, -1, nullptr},
    {"Relu", map_activation_of<Activation::ReLU>, -1, nullptr},
    {"Tanh", map_activation_of<Activation::Tanh>, -1, nullptr},
    {"Sigmoid", map_activation_of<Activation::Sigmoid>, -1, nullptr},
    {"Softmax", map_softmax, -1, nullptr},
    {"SoftmaxCrossEntropyLoss", map_softmax_cross_entropy, 1, nullptr},
    {"GlobalAveragePool", map_global_avg_pool, -1, nullptr},
    {"BatchNormalization", map_batchnorm, -1, kBatchnormTraining},
};

const OpRow* find_row(const std::string& op_type) {
  for (const OpRow& r : kOps)
    if (op_type == r.op_type) return &r;
  return nullptr;
}

}  // namespace

bool is_listed_op(const std::string& op_type) { return find_row(op_type) != nullptr; }

std::vector<std::string> listed_ops() {
  std::vector<std::string> names;
  for (const OpRow& r : kOps) names.push_back(r.op_type);
  return names;
}

Plan plan_case(const Model& m, const std::vector<const Tensor*>& inputs) {
  PCNN_CHECK(m.nodes.size() == 1, "plan_case: a graph of " << m.nodes.size() << " nodes");
  const Node& node = m.nodes[0];
  const OpRow* row = find_row(node.op_type);
  PCNN_CHECK(row, "plan_case: " << node.op_type << " has no row");
  if (!row->map) return skip("op not in pcnn yet");
  if (!node.domain.empty() && node.domain != "ai.onnx") return skip("domain " + node.domain);
  if (m.outputs.size() > 1)
    return skip(row->more_outputs ? row->more_outputs
                                  : "output " + m.outputs[1] + ": pcnn's op gives one output");
  if (inputs.empty() || !inputs[0]) return skip("no input");
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k] || int(k) == row->integer_input || inputs[k]->type == DataType::Float) continue;
    return skip("input " + node.inputs[k] + " is " + to_string(inputs[k]->type) +
                ": pcnn computes in float32");
  }
  return row->map(node, inputs, m.opset);
}

}  // namespace pcnn::test::onnx
