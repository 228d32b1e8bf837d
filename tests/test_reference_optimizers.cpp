// The reference's optimizers against the update rules of core/op_list.hpp, computed by hand and in
// double precision: SGD with momentum and weight decay, Adam with its bias correction over several
// steps and from a resumed step counter.
#include <cmath>

#include "backends/device_array.hpp"
#include "core/contract_types.hpp"
#include "tests/reference_checks.hpp"

namespace pcnn::test {

namespace {

struct Hyper {
  double lr = 0, momentum = 0, weight_decay = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  std::vector<float> array() const {
    std::vector<float> h(kHyperCount);
    h[kHyperLr] = float(lr);
    h[kHyperMomentum] = float(momentum);
    h[kHyperWeightDecay] = float(weight_decay);
    h[kHyperBeta1] = float(beta1);
    h[kHyperBeta2] = float(beta2);
    h[kHyperEps] = float(eps);
    h[kHyperLossScale] = h[kHyperGradUnscale] = 1.f;
    return h;
  }
};

// The same hyper-parameters as the kernel sees them (rounded to float), kept in double.
Hyper as_float(Hyper h) {
  for (double* x : {&h.lr, &h.momentum, &h.weight_decay, &h.beta1, &h.beta2, &h.eps})
    *x = double(float(*x));
  return h;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }
std::vector<float> narrow(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// What a parameter moved by, so that the tolerance is relative to the update, not to the
// parameter (a wrong update of 1e-3 on a parameter of 1 must not hide under its rounding).
std::vector<float> moved(const std::vector<float>& after, const std::vector<float>& before) {
  std::vector<float> d(after.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(double(after[i]) - before[i]);
  return d;
}
std::vector<float> moved(const std::vector<double>& after, const std::vector<float>& before) {
  std::vector<float> d(after.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(after[i] - before[i]);
  return d;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("serial reference: one SGD step by hand (momentum and weight decay, exact in binary)") {
  auto be = make_reference();
  // v = 0.5*0.25 + (0.5 + 0.5*1) = 1.125; p = 1 - 0.5*1.125 = 0.4375. Without weight decay p
  // would be 0.6875, with it subtracted 0.9375, without momentum 0.5.
  Hyper h;
  h.lr = 0.5; h.momentum = 0.5; h.weight_decay = 0.5;
  DeviceArray<float> p(*be, std::vector<float>{1.f, -2.f}), g(*be, std::vector<float>{0.5f, 0.f}),
      v(*be, std::vector<float>{0.25f, 1.f}), hyper(*be, h.array());
  be->sgd_update(2, p.get(), g.get(), v.get(), hyper.get());
  // second element: v = 0.5*1 + (0 + 0.5*-2) = -0.5; p = -2 + 0.25 = -1.75
  check_reference("sgd_update params", p.download(), {0.4375f, -1.75f}, 0.0);
  check_reference("sgd_update velocity", v.download(), {1.125f, -0.5f}, 0.0);
}

TEST_CASE("serial reference: SGD over five steps against double precision") {
  auto be = make_reference();
  const size_t n = 37;
  Hyper h;
  h.lr = 0.1; h.momentum = 0.9; h.weight_decay = 0.05;
  const std::vector<float> p0 = random_vector(n, 11, -2.f, 2.f), v0 = random_vector(n, 12);
  DeviceArray<float> p(*be, p0), v(*be, v0), hyper(*be, h.array()), g(*be, n);
  std::vector<double> want_p = widen(p0), want_v = widen(v0);
  const Hyper d = as_float(h);
  for (uint64_t step = 0; step < 5; ++step) {
    const std::vector<float> grads = random_vector(n, 100 + step);
    g.upload(grads);
    be->sgd_update(n, p.get(), g.get(), v.get(), hyper.get());
    for (size_t i = 0; i < n; ++i) {
      want_v[i] = d.momentum * want_v[i] + (grads[i] + d.weight_decay * want_p[i]);
      want_p[i] -= d.lr * want_v[i];
    }
  }
  // float against double over 5 steps: ~1e-7 relative per operation
  check_reference("sgd_update: parameter change", moved(p.download(), p0), moved(want_p, p0), 1e-5);
  check_reference("sgd_update: velocity", v.download(), narrow(want_v), 1e-5);
}

TEST_CASE("serial reference: Adam's first step moves each parameter by lr against its gradient") {
  auto be = make_reference();
  // Step 0 (t = 1) from m = v = 0: the bias corrections make m_hat = g and v_hat = g^2 exactly,
  // so the step is lr * g / (|g| + eps): lr times the sign of g, whatever beta1 and beta2 are.
  Hyper h;
  h.lr = 0.01; h.beta1 = 0.8; h.beta2 = 0.99; h.eps = 1e-8;
  const std::vector<float> p0 = {1.f, -1.f, 0.5f, 3.f}, grads = {0.2f, -4.f, 1e-3f, -0.5f};
  DeviceArray<float> p(*be, p0), g(*be, grads), m(*be, std::vector<float>(4, 0.f)),
      v(*be, std::vector<float>(4, 0.f)), hyper(*be, h.array());
  DeviceArray<int32_t> step(*be, std::vector<int32_t>{0});
  be->adam_update(4, p.get(), g.get(), m.get(), v.get(), hyper.get(), step.get());
  std::vector<float> want(4);
  for (size_t i = 0; i < 4; ++i)
    want[i] = float(-0.01 * grads[i] / (std::fabs(double(grads[i])) + 1e-8));
  check_reference("adam_update: first step", moved(p.download(), p0), want, 1e-5);
}

TEST_CASE("serial reference: Adam over six steps, and from a resumed step, against double") {
  auto be = make_reference();
  const size_t n = 41;
  Hyper h;
  h.lr = 0.01; h.weight_decay = 0.02; h.beta1 = 0.9; h.beta2 = 0.999; h.eps = 1e-8;
  const Hyper d = as_float(h);
  for (int first_step : {0, 7}) {  // 7: a resumed run, t = 8 in the bias correction
    INFO("starting at step " << first_step);
    const std::vector<float> p0 = random_vector(n, 21, -2.f, 2.f);
    const std::vector<float> m0 = first_step ? random_vector(n, 22, -0.1f, 0.1f)
                                             : std::vector<float>(n, 0.f);
    const std::vector<float> v0 = first_step ? random_vector(n, 23, 0.f, 0.01f)
                                             : std::vector<float>(n, 0.f);
    DeviceArray<float> p(*be, p0), m(*be, m0), v(*be, v0), hyper(*be, h.array()), g(*be, n);
    DeviceArray<int32_t> step(*be, std::vector<int32_t>{first_step});
    std::vector<double> want_p = widen(p0), want_m = widen(m0), want_v = widen(v0);
    for (int s = first_step; s < first_step + 6; ++s) {
      const std::vector<float> grads = random_vector(n, 200 + uint64_t(s));
      g.upload(grads);
      be->adam_update(n, p.get(), g.get(), m.get(), v.get(), hyper.get(), step.get());
      be->increment(step.get());
      const double t = s + 1;
      for (size_t i = 0; i < n; ++i) {
        const double gi = grads[i] + d.weight_decay * want_p[i];
        want_m[i] = d.beta1 * want_m[i] + (1 - d.beta1) * gi;
        want_v[i] = d.beta2 * want_v[i] + (1 - d.beta2) * gi * gi;
        const double m_hat = want_m[i] / (1 - std::pow(d.beta1, t));
        const double v_hat = want_v[i] / (1 - std::pow(d.beta2, t));
        want_p[i] -= d.lr * m_hat / (std::sqrt(v_hat) + d.eps);
      }
    }
    // float powf and sqrtf against double: ~1e-6 relative on an update of ~lr per step
    check_reference("adam_update: parameter change", moved(p.download(), p0), moved(want_p, p0),
                    1e-4);
    check_reference("adam_update: first moment", m.download(), narrow(want_m), 1e-5);
    check_reference("adam_update: second moment", v.download(), narrow(want_v), 1e-5);
    CHECK(step.download()[0] == first_step + 6);
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
