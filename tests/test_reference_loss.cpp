// The reference's softmax cross-entropy at logits far outside float's exp range (100, -100, 1e4),
// against a double-precision log-sum-exp: the loss stays finite and exact, the gradient is
// (softmax - onehot) / N, the correct count takes the first maximum, and metrics accumulate.
#include <algorithm>
#include <cmath>

#include "backends/device_array.hpp"
#include "core/contract_types.hpp"
#include "tests/reference_checks.hpp"

namespace pcnn::test {

namespace {

constexpr int kClasses = 3;

struct Row {
  std::vector<float> logits;
  int32_t label;
};

// Rows whose plain exp() overflows float (e^100 > 3.4e38) or underflows it to 0.
const std::vector<Row> kRows = {
    {{100.f, 0.f, -100.f}, 0},     // loss ~ e^-100, practically 0
    {{100.f, 0.f, -100.f}, 2},     // loss 200
    {{1e4f, -1e4f, 0.f}, 1},       // loss 2e4
    {{1e4f, 1e4f, 1e4f}, 0},       // a three-way tie: loss log 3, first maximum correct
    {{-100.f, -100.f, -1e4f}, 1},  // loss log 2; the first maximum (0) is not the label
};

// -log softmax[label] and (softmax - onehot) / N, in double with the maximum subtracted.
double row_loss(const Row& r) {
  const double m = *std::max_element(r.logits.begin(), r.logits.end());
  double sum = 0;
  for (float z : r.logits) sum += std::exp(double(z) - m);
  return m + std::log(sum) - r.logits[size_t(r.label)];
}
std::vector<float> row_grad(const Row& r, int N) {
  const double m = *std::max_element(r.logits.begin(), r.logits.end());
  double sum = 0;
  for (float z : r.logits) sum += std::exp(double(z) - m);
  std::vector<float> g;
  for (int k = 0; k < kClasses; ++k)
    g.push_back(float((std::exp(double(r.logits[size_t(k)]) - m) / sum - (k == r.label)) / N));
  return g;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("serial reference: softmax cross-entropy is finite and exact at logits of 100 and 1e4") {
  auto be = make_reference();
  const int N = int(kRows.size());
  std::vector<float> logits;
  std::vector<int32_t> labels;
  std::vector<float> want_grad;
  double want_loss = 0;
  for (const Row& r : kRows) {
    logits.insert(logits.end(), r.logits.begin(), r.logits.end());
    labels.push_back(r.label);
    const std::vector<float> g = row_grad(r, N);
    want_grad.insert(want_grad.end(), g.begin(), g.end());
    want_loss += row_loss(r);
  }
  // Each row alone (N = 1): its loss, finite, to float precision.
  for (size_t i = 0; i < kRows.size(); ++i) {
    INFO("row " << i << ", label " << kRows[i].label);
    DeviceArray<float> z(*be, kRows[i].logits), dz(*be, size_t(kClasses)),
        metrics(*be, std::vector<float>(kMetricCount, 0.f));
    DeviceArray<int32_t> y(*be, std::vector<int32_t>{kRows[i].label});
    be->softmax_cross_entropy(1, kClasses, z.get(), y.get(), dz.get(), metrics.get());
    const float loss = metrics.download()[kMetricLossSum];
    CHECK_MESSAGE(std::isfinite(loss), "backend " << reference_name() << " (the reference): loss "
                                                  << loss << ", want " << row_loss(kRows[i]));
    CHECK(loss == doctest::Approx(row_loss(kRows[i])).epsilon(1e-6));  // absolute near 0
    check_reference("softmax_cross_entropy gradient, one row", dz.download(),
                    row_grad(kRows[i], 1), 1e-6);
  }
  // All rows at once: the gradient divided by N, metrics added to what was there.
  DeviceArray<float> z(*be, logits), dz(*be, logits.size()),
      metrics(*be, std::vector<float>{1.5f, 2.f});
  DeviceArray<int32_t> y(*be, labels);
  be->softmax_cross_entropy(N, kClasses, z.get(), y.get(), dz.get(), metrics.get());
  check_reference("softmax_cross_entropy gradient, five rows", dz.download(), want_grad, 1e-6);
  const std::vector<float> m = metrics.download();
  CHECK(m[kMetricLossSum] == doctest::Approx(1.5 + want_loss).epsilon(1e-6));
  CHECK(m[kMetricCorrect] == 2.f + 2.f);  // rows 0 and 3
}

}  // TEST_SUITE

}  // namespace pcnn::test
