// Mapping paths ONNX's own cases do not reach, on the backend under test against double-precision
// loops: Gemm's C in every shape that broadcasts to (M,N) (no case has a column C (M,1), none a
// broadcast C with beta != 1 and a transposed A), beta 1 (bias_add) and 0.5 (C laid out on the
// host, gemm's beta), both transposes; Softmax before opset 13 (every case is opset 13), which
// flattens the input to 2-D at its axis; GlobalAveragePool and BatchNormalization on inputs of
// rank other than 4 (every case is (N,C,H,W)), which the mappers flatten to (N,C,HW).
#include <cmath>
#include <type_traits>

#include "tests/compare.hpp"
#include "tests/harness.hpp"
#include "tests/onnx/mapping.hpp"
#include "tests/onnx/run.hpp"

namespace pcnn::test::onnx {

namespace {

Tensor float_tensor(std::vector<int64_t> dims, uint64_t seed) {
  Tensor t;
  t.type = DataType::Float;
  t.dims = std::move(dims);
  t.floats = random_vector(t.count(), seed);
  return t;
}

// An INT attribute from an int64_t, a FLOAT one from a float.
template <class T>
Attribute attribute(const std::string& name, T value) {
  static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, float>, "INT or FLOAT");
  Attribute a;
  a.name = name;
  if constexpr (std::is_same_v<T, float>) {
    a.kind = Attribute::Float;
    a.f = value;
  } else {
    a.kind = Attribute::Int;
    a.i = value;
  }
  return a;
}

// A one-node model of op_type with the given inputs and one output.
Model one_node(const std::string& op_type, const std::vector<std::string>& inputs,
               std::vector<Attribute> attributes = {}) {
  Model m;
  m.opset = 15;
  Node n;
  n.op_type = op_type;
  n.inputs = inputs;
  n.outputs = {"y"};
  n.attributes = std::move(attributes);
  m.nodes = {n};
  m.inputs = inputs;
  m.outputs = {"y"};
  return m;
}

}  // namespace

TEST_SUITE("backend") {

TEST_CASE("onnx mapping: Gemm with C as a matrix, a row, a column or a scalar, beta 1 and 0.5") {
  const int M = 5, N = 3, K = 4;
  const std::vector<std::vector<int64_t>> c_shapes = {{M, N}, {N}, {1, N}, {M, 1}, {1, 1}, {1}, {}};
  uint64_t seed = 1;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const float beta : {1.f, 0.5f})
        for (const auto& c_dims : c_shapes) {
          const Tensor A = float_tensor(ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K},
                                        seed++);
          const Tensor B = float_tensor(tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N},
                                        seed++);
          const Tensor C = float_tensor(c_dims, seed++);
          Model m;
          m.opset = 13;
          Node n;
          n.op_type = "Gemm";
          n.inputs = {"A", "B", "C"};
          n.outputs = {"Y"};
          n.attributes = {attribute("transA", int64_t(ta)), attribute("transB", int64_t(tb)),
                          attribute("alpha", 0.75f), attribute("beta", beta)};
          m.nodes = {n};
          m.inputs = {"A", "B", "C"};
          m.outputs = {"Y"};
          const Plan plan = plan_case(m, {&A, &B, &C});
          REQUIRE(plan.skip == "");
          // C broadcast by hand: its last axis runs along N (or is 1), its first along M.
          const int64_t c_rows = c_dims.size() == 2 ? c_dims[0] : 1;
          const int64_t c_cols = c_dims.empty() ? 1 : c_dims.back();
          Tensor want;
          want.type = DataType::Float;
          want.dims = {M, N};
          for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
              double acc = 0;
              for (int k = 0; k < K; ++k)
                acc += double(ta ? A.floats[k * M + i] : A.floats[i * K + k]) *
                       double(tb ? B.floats[j * K + k] : B.floats[k * N + j]);
              const double c = C.floats[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
              want.floats.push_back(float(0.75 * acc + double(beta) * c));
            }
          const std::string diff = compare_to_reference(plan.run(backend()), plan.dims, want);
          CHECK_MESSAGE(diff == "", "backend " << backend_name() << ", transA " << ta << " transB "
                                               << tb << " beta " << beta << " C ("
                                               << c_dims.size() << "-d, " << C.count()
                                               << " values): " << diff);
        }
}

TEST_CASE("onnx mapping: Softmax before opset 13 flattens the input to 2-D at axis") {
  const Tensor x = float_tensor({3, 4, 5}, 7);
  for (const int64_t axis : {0, 1, 2, -1}) {
    Model m;
    m.opset = 11;
    Node n;
    n.op_type = "Softmax";
    n.inputs = {"x"};
    n.outputs = {"y"};
    n.attributes = {attribute("axis", axis)};
    m.nodes = {n};
    m.inputs = {"x"};
    m.outputs = {"y"};
    const Plan plan = plan_case(m, {&x});
    REQUIRE(plan.skip == "");
    // rows = product of the dims before axis, each row softmax-ed over the rest.
    const size_t a = size_t(axis < 0 ? axis + 3 : axis);
    size_t rows = 1;
    for (size_t d = 0; d < a; ++d) rows *= size_t(x.dims[d]);
    const size_t K = x.count() / rows;
    Tensor want;
    want.type = DataType::Float;
    want.dims = x.dims;
    for (size_t r = 0; r < rows; ++r) {
      double top = -1e300, sum = 0;
      for (size_t k = 0; k < K; ++k) top = std::max(top, double(x.floats[r * K + k]));
      for (size_t k = 0; k < K; ++k) sum += std::exp(double(x.floats[r * K + k]) - top);
      for (size_t k = 0; k < K; ++k)
        want.floats.push_back(float(std::exp(double(x.floats[r * K + k]) - top) / sum));
    }
    const std::string diff = compare_to_reference(plan.run(backend()), plan.dims, want);
    CHECK_MESSAGE(diff == "", "backend " << backend_name() << ", axis " << axis << ": " << diff);
  }
}

TEST_CASE("onnx mapping: GlobalAveragePool and BatchNormalization on inputs of rank 2, 3 and 5") {
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {2, 3, 7}, {2, 3, 2, 3, 4}};
  uint64_t seed = 11;
  for (const auto& dims : shapes) {
    const Tensor x = float_tensor(dims, seed++);
    const size_t N = size_t(dims[0]), C = size_t(dims[1]), HW = x.count() / (N * C);
    if (dims.size() >= 3) {  // ONNX's GlobalAveragePool needs a spatial axis
      const Plan plan = plan_case(one_node("GlobalAveragePool", {"x"}), {&x});
      REQUIRE(plan.skip == "");
      Tensor want;
      want.type = DataType::Float;
      want.dims = dims;
      for (size_t d = 2; d < dims.size(); ++d) want.dims[d] = 1;
      for (size_t nc = 0; nc < N * C; ++nc) {
        double sum = 0;
        for (size_t i = 0; i < HW; ++i) sum += x.floats[nc * HW + i];
        want.floats.push_back(float(sum / double(HW)));
      }
      const std::string diff = compare_to_reference(plan.run(backend()), plan.dims, want);
      CHECK_MESSAGE(diff == "", "backend " << backend_name() << ", GlobalAveragePool of "
                                           << shape_text(dims) << ": " << diff);
    }
    const Tensor scale = float_tensor({dims[1]}, seed++), bias = float_tensor({dims[1]}, seed++);
    const Tensor mean = float_tensor({dims[1]}, seed++);
    Tensor var = float_tensor({dims[1]}, seed++);
    for (float& v : var.floats) v = std::fabs(v) + 0.25f;  // a variance is positive
    const float eps = 0.01f;
    const Plan plan =
        plan_case(one_node("BatchNormalization", {"x", "scale", "B", "mean", "var"},
                           {attribute("epsilon", eps)}),
                  {&x, &scale, &bias, &mean, &var});
    REQUIRE(plan.skip == "");
    Tensor want;
    want.type = DataType::Float;
    want.dims = dims;
    for (size_t i = 0; i < x.count(); ++i) {
      const size_t c = i / HW % C;
      const double xhat =
          (double(x.floats[i]) - mean.floats[c]) / std::sqrt(double(var.floats[c]) + eps);
      want.floats.push_back(float(scale.floats[c] * xhat + bias.floats[c]));
    }
    const std::string diff = compare_to_reference(plan.run(backend()), plan.dims, want);
    CHECK_MESSAGE(diff == "", "backend " << backend_name() << ", BatchNormalization of "
                                         << shape_text(dims) << ": " << diff);
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test::onnx
