// Every layer's backward pass against central finite differences of its forward pass, on the
// backend under test. Loss = sum(y * r) for a fixed random r, so dL/dy = r.
//
// Kinks (ReLU at 0, max-pool ties) make finite differences lie; a coordinate whose estimates at
// eps and eps/2 disagree is skipped as sitting on a kink, and at most a fifth may be skipped.
// Tolerance: |numeric - analytic| <= 2e-2 * rms(analytic) + 1e-3 — float forward passes give
// the estimate about 1e-3 of noise at eps = 1e-2; a wrong gradient is off by O(rms).
#include <cmath>

#include "layers/activation.hpp"
#include "layers/conv2d.hpp"
#include "layers/dense.hpp"
#include "layers/pool2d.hpp"
#include "tests/harness.hpp"

namespace pcnn::test {

namespace {

struct GradProbe {
  Layer& layer;
  int N;
  std::vector<float> x, params, r;

  double loss(Backend& be, const std::vector<float>& xv, const std::vector<float>& pv) {
    auto xd = to_device(be, xv);
    auto pd = to_device(be, pv.empty() ? std::vector<float>{0.f} : pv);
    DeviceArray<float> gd(be, std::max<size_t>(1, pv.size()));
    layer.bind(pd.get(), gd.get());
    auto y = poisoned(be, size_t(N) * layer.output_shape().size());
    layer.forward(be, N, xd.get(), y.get());
    const auto yv = y.download();
    double l = 0;
    for (size_t i = 0; i < yv.size(); ++i) l += double(yv[i]) * r[i];
    return l;
  }

  // Checks `count` coordinates of `v` (x or params) against the analytic gradient `g`.
  void check(Backend& be, const char* what, std::vector<float>& v, bool is_x,
             const std::vector<float>& g, int count) {
    double rms = 0;
    for (float a : g) rms += double(a) * a;
    rms = std::sqrt(rms / std::max<size_t>(1, g.size()));
    Rng pick(7);
    int skipped = 0, checked = 0;
    for (int k = 0; k < count; ++k) {
      const size_t i = size_t(pick.next_u64() % v.size());
      auto numeric = [&](float eps) {
        const float keep = v[i];
        v[i] = keep + eps;
        const double lp = is_x ? loss(be, v, params) : loss(be, x, v);
        v[i] = keep - eps;
        const double lm = is_x ? loss(be, v, params) : loss(be, x, v);
        v[i] = keep;
        return (lp - lm) / (2.0 * eps);
      };
      const double n1 = numeric(1e-2f), n2 = numeric(5e-3f);
      const double tol = 2e-2 * rms + 1e-3;
      if (std::fabs(n1 - n2) > tol) { ++skipped; continue; }
      ++checked;
      INFO("backend " << backend_name() << ", " << layer.describe() << ": d" << what << "[" << i
                      << "] analytic " << g[i] << " numeric " << n2);
      CHECK(std::fabs(n2 - g[i]) <= tol);
    }
    INFO(layer.describe() << ": " << skipped << " of " << count << " coordinates on kinks");
    CHECK(skipped * 5 <= count);
    CHECK(checked > 0);
  }
};

void check_layer_gradients(Layer& layer, int N, bool first_layer = false) {
  Backend& be = backend();
  layer.setup(be, N);
  GradProbe probe{layer, N, random_vector(size_t(N) * layer.input_shape().size(), 100),
                  std::vector<float>(layer.param_count()),
                  random_vector(size_t(N) * layer.output_shape().size(), 101)};
  if (layer.param_count()) {
    Rng rng(102);
    layer.init_params(rng, probe.params.data());
    // Biases start at zero; make them random too, so their gradient path is exercised.
    for (auto& p : probe.params)
      if (p == 0.f) p = rng.uniform(-0.5f, 0.5f);
  }
  // Analytic gradients.
  auto xd = to_device(be, probe.x);
  auto pd = to_device(be, probe.params.empty() ? std::vector<float>{0.f} : probe.params);
  auto gd = poisoned(be, std::max<size_t>(1, probe.params.size()));
  layer.bind(pd.get(), gd.get());
  auto y = poisoned(be, probe.r.size());
  layer.forward(be, N, xd.get(), y.get());
  auto rd = to_device(be, probe.r);
  auto dx = poisoned(be, probe.x.size());
  layer.backward(be, N, xd.get(), y.get(), rd.get(), first_layer ? nullptr : dx.get());
  const auto dxv = dx.download();
  const auto gv = gd.download();
  if (!first_layer) probe.check(be, "x", probe.x, true, dxv, 24);
  if (layer.param_count()) probe.check(be, "param", probe.params, false, gv, 24);
}

Conv2dParams conv(int maps, int kernel, int stride, int pad, Activation act, PoolKind pool) {
  Conv2dParams p;
  p.maps = maps; p.kernel = kernel; p.stride = stride; p.pad = pad;
  p.epilogue.act = act; p.epilogue.pool = pool;
  p.init = InitKind::Xavier;
  return p;
}

}  // namespace

TEST_SUITE("backend") {

TEST_CASE("finite differences: Conv2D with every epilogue") {
  Conv2D plain({2, 8, 7}, conv(3, 3, 1, 1, Activation::None, PoolKind::None));
  check_layer_gradients(plain, 2);
  Conv2D lenet_like({2, 8, 8}, conv(3, 3, 1, 1, Activation::ReLU, PoolKind::Max));
  check_layer_gradients(lenet_like, 2);
  Conv2D simard_like({1, 9, 9}, conv(4, 3, 2, 0, Activation::Tanh, PoolKind::None));
  check_layer_gradients(simard_like, 3);
  Conv2D avg({3, 6, 8}, conv(2, 3, 1, 0, Activation::Sigmoid, PoolKind::Avg));
  check_layer_gradients(avg, 2);
  Conv2D first({1, 7, 7}, conv(2, 3, 1, 1, Activation::ReLU, PoolKind::Max));
  check_layer_gradients(first, 2, /*first_layer=*/true);
}

TEST_CASE("finite differences: Dense with every activation") {
  for (Activation a : {Activation::None, Activation::ReLU, Activation::Tanh, Activation::Sigmoid}) {
    Dense d({2, 3, 2}, 7, a, InitKind::Xavier);
    check_layer_gradients(d, 3);
  }
}

TEST_CASE("finite differences: Pool2D and activation layers") {
  Pool2D maxp({2, 6, 7}, PoolKind::Max, 2, 2);
  check_layer_gradients(maxp, 2);
  Pool2D avgp({2, 7, 7}, PoolKind::Avg, 3, 2);
  check_layer_gradients(avgp, 2);
  for (Activation a : {Activation::ReLU, Activation::Tanh, Activation::Sigmoid}) {
    ActivationLayer l({3, 4, 5}, a);
    check_layer_gradients(l, 2);
  }
}

TEST_CASE("finite differences: softmax cross-entropy") {
  Backend& be = backend();
  const int N = 4, K = 10;
  auto logits = random_vector(size_t(N) * K, 110, -2.f, 2.f);
  std::vector<int32_t> labels = {3, 0, 9, 3};
  auto yd = to_device(be, labels);
  auto mean_loss = [&](const std::vector<float>& l) {
    auto ld = to_device(be, l);
    auto m = to_device(be, std::vector<float>{0.f, 0.f});
    be.softmax_cross_entropy(N, K, ld.get(), yd.get(), nullptr, m.get());
    return double(m.download()[kMetricLossSum]) / N;
  };
  auto ld = to_device(be, logits);
  auto d = poisoned(be, logits.size());
  auto m = to_device(be, std::vector<float>{0.f, 0.f});
  be.softmax_cross_entropy(N, K, ld.get(), yd.get(), d.get(), m.get());
  const auto g = d.download();
  for (size_t i = 0; i < logits.size(); i += 3) {
    auto v = logits;
    v[i] += 1e-2f;
    const double lp = mean_loss(v);
    v[i] -= 2e-2f;
    const double lm = mean_loss(v);
    INFO("backend " << backend_name() << " dlogits[" << i << "]");
    CHECK(std::fabs((lp - lm) / 2e-2 - g[i]) <= 2e-3);
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
