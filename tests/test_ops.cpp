// Every kernel of the contract on the backend under test against serial, from the same seeded
// random inputs, over the op-case table. Outputs start as NaN, so an unwritten element fails.
//
// Tolerances (normalised L2 error): fp32 sums in a different order differ by ~sqrt(terms) ulp,
// about 1e-6 for these sizes: 2e-5 leaves room for it and still catches any wrong index or
// missing term (those give errors of 1e-2 and more). Element-wise ops with the same formula
// (core/*_math.hpp) may differ only by the device's libm: 1e-5.
#include <functional>

#include "tests/harness.hpp"
#include "tests/op_cases.hpp"

namespace pcnn::test {

namespace {
constexpr double kSumTol = 2e-5;
constexpr double kElementTol = 1e-5;

// Each output tensor is compared on its own, so a large one cannot hide errors in a small one.
using Outputs = std::vector<std::vector<float>>;
void append(Outputs& o, const std::vector<float>& v) { o.push_back(v); }

// Runs the same computation on serial and on the backend under test and compares the outputs.
void compare(const std::string& what, double tol, const std::function<Outputs(Backend&)>& run) {
  const Outputs want = run(reference());
  const Outputs got = run(backend());
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    check_close(what + " (output " + std::to_string(i) + ")", got[i], want[i], tol);
}
}  // namespace

TEST_SUITE("backend") {

TEST_CASE("memory: upload, copy, fill, download round trip") {
  compare("memory", 0.0, [](Backend& be) {
    const auto host = random_vector(1000, 1);
    auto a = to_device(be, host);
    auto b = poisoned(be, 1000);
    be.copy(b.get(), a.get(), 1000 * sizeof(float));
    auto c = poisoned(be, 300);
    be.fill(c.get(), 0.25f, 300);
    Outputs o{b.download()};
    append(o, c.download());
    return o;
  });
}

TEST_CASE("gemm: every transpose combination") {
  for (const auto& c : gemm_cases())
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      compare(std::string("gemm ") + c.name + (ta ? " A^T" : "") + (tb ? " B^T" : ""), kSumTol,
              [&](Backend& be) {
                auto A = to_device(be, random_vector(size_t(c.M) * c.K, 2));
                auto B = to_device(be, random_vector(size_t(c.K) * c.N, 3));
                auto C = to_device(be, random_vector(size_t(c.M) * c.N, 4));
                if (c.beta == 0.f) be.fill(C.get(), std::nanf(""), C.size());  // beta 0 ignores C
                be.gemm(ta, tb, c.M, c.N, c.K, c.alpha, A.get(), ta ? c.M : c.K, B.get(),
                        tb ? c.K : c.N, c.beta, C.get(), c.N);
                return Outputs{C.download()};
              });
    }
}

TEST_CASE("conv2d forward, backward data, backward weights") {
  for (const auto& c : conv_cases()) {
    const Conv2dShape s = c.s;
    compare(std::string("conv2d_forward ") + c.name, kSumTol, [&](Backend& be) {
      auto x = to_device(be, random_vector(s.x_size(), 10));
      auto w = to_device(be, random_vector(s.w_size(), 11));
      auto b = to_device(be, random_vector(size_t(s.K), 12));
      auto y = poisoned(be, s.y_size());
      be.conv2d_forward(s, x.get(), w.get(), b.get(), y.get());
      auto y2 = poisoned(be, s.y_size());
      be.conv2d_forward(s, x.get(), w.get(), nullptr, y2.get());
      Outputs o{y.download()};
      append(o, y2.download());
      return o;
    });
    compare(std::string("conv2d_backward_data ") + c.name, kSumTol, [&](Backend& be) {
      auto dy = to_device(be, random_vector(s.y_size(), 13));
      auto w = to_device(be, random_vector(s.w_size(), 14));
      auto dx = poisoned(be, s.x_size());
      be.conv2d_backward_data(s, dy.get(), w.get(), dx.get());
      return Outputs{dx.download()};
    });
    compare(std::string("conv2d_backward_weights ") + c.name, kSumTol, [&](Backend& be) {
      auto x = to_device(be, random_vector(s.x_size(), 15));
      auto dy = to_device(be, random_vector(s.y_size(), 16));
      auto dw = poisoned(be, s.w_size());
      auto db = poisoned(be, size_t(s.K));
      be.conv2d_backward_weights(s, x.get(), dy.get(), dw.get(), db.get());
      Outputs o{dw.download()};
      append(o, db.download());
      auto dw2 = poisoned(be, s.w_size());  // without a bias gradient
      be.conv2d_backward_weights(s, x.get(), dy.get(), dw2.get(), nullptr);
      append(o, dw2.download());
      return o;
    });
  }
}

TEST_CASE("pool2d forward and backward, max and average") {
  for (const auto& c : pool_cases())
    for (PoolKind kind : {PoolKind::Max, PoolKind::Avg}) {
      const Pool2dShape s = c.s;
      const std::string k = kind == PoolKind::Max ? "max " : "avg ";
      compare("pool2d " + k + c.name, kElementTol, [&](Backend& be) {
        auto x = to_device(be, random_vector(s.x_size(), 20));
        auto y = poisoned(be, s.y_size());
        be.pool2d_forward(kind, s, x.get(), y.get());
        auto dy = to_device(be, random_vector(s.y_size(), 21));
        auto dx = poisoned(be, s.x_size());
        be.pool2d_backward(kind, s, x.get(), dy.get(), dx.get());
        Outputs o{y.download()};
        append(o, dx.download());
        return o;
      });
    }
}

TEST_CASE("max pooling with ties: the gradient goes to the first maximum") {
  // Flat image regions through ReLU give exactly equal values; the contract fixes which one wins.
  for (const auto& c : pool_cases()) {
    const Pool2dShape s = c.s;
    compare(std::string("max pool with ties ") + c.name, 0.0, [&](Backend& be) {
      std::vector<float> xs(s.x_size());
      Rng rng(24);
      for (auto& v : xs) v = 0.5f * float(rng.next_u64() % 3);  // values 0, 0.5, 1
      auto x = to_device(be, xs);
      auto y = poisoned(be, s.y_size());
      be.pool2d_forward(PoolKind::Max, s, x.get(), y.get());
      auto dy = to_device(be, random_vector(s.y_size(), 25));
      auto dx = poisoned(be, s.x_size());
      be.pool2d_backward(PoolKind::Max, s, x.get(), dy.get(), dx.get());
      Outputs o{y.download()};
      append(o, dx.download());
      return o;
    });
  }
}

TEST_CASE("bias add and bias gradient") {
  for (auto [N, C, HW] : {std::array<int, 3>{5, 6, 784}, {1, 3, 1}, {64, 120, 1}, {3, 7, 13}}) {
    compare("bias N" + std::to_string(N) + " C" + std::to_string(C) + " HW" + std::to_string(HW),
            kSumTol, [&](Backend& be) {
              const size_t n = size_t(N) * C * HW;
              auto y = to_device(be, random_vector(n, 30));
              auto b = to_device(be, random_vector(size_t(C), 31));
              be.bias_add(N, C, HW, b.get(), y.get());
              auto db = poisoned(be, size_t(C));
              be.bias_backward(N, C, HW, y.get(), db.get());
              Outputs o{y.download()};
              append(o, db.download());
              return o;
            });
  }
}

TEST_CASE("activations forward and backward, in place and not") {
  for (Activation act : {Activation::ReLU, Activation::Tanh, Activation::Sigmoid}) {
    compare("activation " + std::to_string(int(act)), kElementTol, [&](Backend& be) {
      const size_t n = 1237;
      auto x = to_device(be, random_vector(n, 40, -3.f, 3.f));
      auto y = poisoned(be, n);
      be.activation_forward(act, n, x.get(), y.get());
      auto dy = to_device(be, random_vector(n, 41));
      auto dx = poisoned(be, n);
      be.activation_backward(act, n, y.get(), dy.get(), dx.get());
      Outputs o{y.download()};
      append(o, dx.download());
      be.activation_forward(act, n, x.get(), x.get());          // in place
      be.activation_backward(act, n, x.get(), dy.get(), dy.get());
      append(o, x.download());
      append(o, dy.download());
      return o;
    });
  }
}

TEST_CASE("softmax cross-entropy: gradient and accumulated metrics") {
  for (auto [N, K] : {std::array<int, 2>{64, 10}, {1, 10}, {7, 3}, {1000, 10}}) {
    compare("softmax_cross_entropy N" + std::to_string(N) + " K" + std::to_string(K), kSumTol,
            [&](Backend& be) {
              auto logits = to_device(be, random_vector(size_t(N) * K, 50, -4.f, 4.f));
              std::vector<int32_t> labels(N);
              Rng rng(51);
              for (auto& l : labels) l = int32_t(rng.next_u64() % uint64_t(K));
              auto y = to_device(be, labels);
              auto d = poisoned(be, size_t(N) * K);
              auto metrics = to_device(be, std::vector<float>{1.5f, 2.f});  // accumulates
              be.softmax_cross_entropy(N, K, logits.get(), y.get(), d.get(), metrics.get());
              be.softmax_cross_entropy(N, K, logits.get(), y.get(), nullptr, metrics.get());
              Outputs o{d.download()};
              append(o, metrics.download());
              return o;
            });
  }
}

TEST_CASE("optimizers: sgd and adam over an arena, several steps") {
  const size_t n = 10007;  // not a multiple of any vector width
  compare("sgd_update", kElementTol, [&](Backend& be) {
    auto p = to_device(be, random_vector(n, 60));
    auto g = to_device(be, random_vector(n, 61));
    auto v = to_device(be, random_vector(n, 62));
    auto h = to_device(be, std::vector<float>{0.05f, 0.9f, 5e-4f, 0.9f, 0.999f, 1e-8f});
    for (int i = 0; i < 3; ++i) be.sgd_update(n, p.get(), g.get(), v.get(), h.get());
    Outputs o{p.download()};
    append(o, v.download());
    return o;
  });
  compare("adam_update", kElementTol, [&](Backend& be) {
    auto p = to_device(be, random_vector(n, 63));
    auto g = to_device(be, random_vector(n, 64));
    auto m = to_device(be, random_vector(n, 65));
    auto v = to_device(be, random_vector(n, 66, 0.f, 1.f));
    auto h = to_device(be, std::vector<float>{1e-3f, 0.f, 1e-4f, 0.9f, 0.999f, 1e-8f});
    auto step = to_device(be, std::vector<int32_t>{0});
    for (int i = 0; i < 3; ++i) {
      be.adam_update(n, p.get(), g.get(), m.get(), v.get(), h.get(), step.get());
      be.increment(step.get());
    }
    Outputs o{p.download()};
    append(o, m.download());
    append(o, v.download());
    append(o, {float(step.download()[0])});
    return o;
  });
}

TEST_CASE("data: shuffled training batches and in-order batches") {
  const int count = 203, H = 5, W = 4;
  std::vector<uint8_t> images(size_t(count) * H * W);
  std::vector<int32_t> labels(count);
  Rng rng(70);
  for (auto& p : images) p = uint8_t(rng.next_u64() % 256);
  for (auto& l : labels) l = int32_t(rng.next_u64() % 10);
  compare("gather_train_batch / gather_batch", 0.0, [&](Backend& be) {
    DeviceArray<uint8_t> im(be, images);
    auto lb = to_device(be, labels);
    DeviceDataset d{im.get(), lb.get(), count, H, W, 0.3f, 2.5f};
    const BatchLayout layout{16, 6, 5};  // padded beyond the 5x4 images
    auto step = to_device(be, std::vector<int32_t>{0});
    Outputs o;
    for (int s = 0; s < 15; ++s) {  // crosses into the second epoch (12 steps per epoch)
      auto x = poisoned(be, size_t(16) * 6 * 5);
      DeviceArray<int32_t> y(be, 16);
      be.gather_train_batch(d, step.get(), 12, 9u, layout, x.get(), y.get());
      be.increment(step.get());
      append(o, x.download());
      std::vector<float> yl;
      for (int32_t l : y.download()) yl.push_back(float(l));
      append(o, yl);
    }
    auto x = poisoned(be, size_t(11) * 6 * 5);
    DeviceArray<int32_t> y(be, 11);
    be.gather_batch(d, 190, BatchLayout{11, 6, 5}, x.get(), y.get());
    append(o, x.download());
    std::vector<float> yl;
    for (int32_t l : y.download()) yl.push_back(float(l));
    append(o, yl);
    return o;
  });
}

TEST_CASE("fused convolution forward and backward (every epilogue)") {
  for (const auto& c : fused_cases()) {
    const Conv2dShape s = c.s;
    Pool2dShape ps;
    ps.N = s.N; ps.C = s.K; ps.H = s.P(); ps.W = s.Q();
    ps.window = c.epi.pool_window; ps.stride = c.epi.pool_stride;
    const bool pooled = c.epi.pool != PoolKind::None;
    const size_t ny = pooled ? ps.y_size() : s.y_size();
    compare(std::string("conv2d_fused ") + c.name, kSumTol, [&](Backend& be) {
      auto x = to_device(be, random_vector(s.x_size(), 80));
      auto w = to_device(be, random_vector(s.w_size(), 81, -0.3f, 0.3f));
      auto b = to_device(be, random_vector(size_t(s.K), 82));
      auto act = poisoned(be, s.y_size());
      auto y = pooled ? poisoned(be, ny) : DeviceArray<float>();
      float* yp = pooled ? y.get() : act.get();
      be.conv2d_fused_forward(s, c.epi, x.get(), w.get(), b.get(), act.get(), yp);
      auto dy = to_device(be, random_vector(ny, 83));
      auto scratch = poisoned(be, s.y_size());
      auto dx = poisoned(be, s.x_size());
      auto dw = poisoned(be, s.w_size());
      auto db = poisoned(be, size_t(s.K));
      be.conv2d_fused_backward(s, c.epi, x.get(), w.get(), act.get(), dy.get(), scratch.get(),
                               dx.get(), dw.get(), db.get());
      Outputs o{act.download()};
      if (pooled) append(o, y.download());
      append(o, dx.download());
      append(o, dw.download());
      append(o, db.download());
      auto dw2 = poisoned(be, s.w_size());  // first layer: no data gradient wanted
      be.conv2d_fused_backward(s, c.epi, x.get(), w.get(), act.get(), dy.get(), scratch.get(),
                               nullptr, dw2.get(), db.get());
      append(o, dw2.download());
      return o;
    });
  }
}

TEST_CASE("fused linear forward and backward (every activation)") {
  struct Case { int N, in, out; Activation act; };
  for (const Case c : {Case{64, 400, 120, Activation::ReLU}, Case{5, 84, 10, Activation::None},
                       Case{3, 1250, 100, Activation::Tanh}, Case{7, 13, 9, Activation::Sigmoid},
                       Case{1, 784, 300, Activation::ReLU}}) {
    compare("linear N" + std::to_string(c.N) + " " + std::to_string(c.in) + "->" +
                std::to_string(c.out) + " act " + std::to_string(int(c.act)),
            kSumTol, [&](Backend& be) {
              auto x = to_device(be, random_vector(size_t(c.N) * c.in, 90));
              auto w = to_device(be, random_vector(size_t(c.out) * c.in, 91, -0.2f, 0.2f));
              auto b = to_device(be, random_vector(size_t(c.out), 92));
              auto y = poisoned(be, size_t(c.N) * c.out);
              be.linear_forward(c.N, c.in, c.out, c.act, x.get(), w.get(), b.get(), y.get());
              auto dy = to_device(be, random_vector(size_t(c.N) * c.out, 93));
              auto scratch = poisoned(be, size_t(c.N) * c.out);
              auto dx = poisoned(be, size_t(c.N) * c.in);
              auto dw = poisoned(be, size_t(c.out) * c.in);
              auto db = poisoned(be, size_t(c.out));
              be.linear_backward(c.N, c.in, c.out, c.act, x.get(), w.get(), y.get(), dy.get(),
                                 scratch.get(), dx.get(), dw.get(), db.get());
              Outputs o{y.download()};
              append(o, dx.download());
              append(o, dw.download());
              append(o, db.download());
              return o;
            });
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
