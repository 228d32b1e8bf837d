// The optimizers on every CPU backend give serial's bits: the update is one element at a time
// in every backend's loop, so vectorising it (openmp's and kokkos' loops, -fno-math-errno) or
// splitting it over threads must change no bit. A scalar fallback is not caught here (it gives
// the same bits, only slower: notes/tuning-openmp.md), a reordered or approximated formula is.
#include <cstring>

#include "backends/registry.hpp"
#include "core/contract_types.hpp"
#include "tests/harness.hpp"
#include "tests/hostile_files.hpp"

namespace pcnn::test {

namespace {

// Parameters after five updates (SGD with momentum, or Adam), from fixed random values.
std::vector<float> after_updates(Backend& be, bool adam) {
  const size_t n = 20011;  // odd: vector bodies and scalar tails both run
  const std::vector<float> p = random_vector(n, 1, -0.8f, 0.8f);
  const std::vector<float> g = random_vector(n, 2, -0.08f, 0.08f);
  std::vector<float> hyper(kHyperCount, 0.f);
  hyper[kHyperLr] = 1e-3f;
  hyper[kHyperMomentum] = 0.9f;
  hyper[kHyperWeightDecay] = 1e-4f;
  hyper[kHyperBeta1] = 0.9f;
  hyper[kHyperBeta2] = 0.999f;
  hyper[kHyperEps] = 1e-8f;
  hyper[kHyperLossScale] = hyper[kHyperGradUnscale] = 1.f;
  DeviceArray<float> dp(be, p), dg(be, g), dm(be, std::vector<float>(n, 0.f)),
      dv(be, std::vector<float>(n, 0.f)), dh(be, hyper);
  DeviceArray<int32_t> step(be, std::vector<int32_t>{0});
  for (int k = 0; k < 5; ++k) {
    step.upload({k});
    if (adam)
      be.adam_update(n, dp.get(), dg.get(), dm.get(), dv.get(), dh.get(), step.get());
    else
      be.sgd_update(n, dp.get(), dg.get(), dm.get(), dh.get());
  }
  return dp.download();
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("sgd and adam updates on every CPU backend equal serial's bit for bit") {
  auto serial = make_backend(reference_backend().name);
  for (const bool adam : {false, true}) {
    const std::vector<float> want = after_updates(*serial, adam);
    for (const auto& be : usable_backends()) {
      if (backend_entry(be->name()).kind != BackendKind::Cpu) continue;
      INFO(be->name() << (adam ? " adam" : " sgd"));
      const std::vector<float> got = after_updates(*be, adam);
      REQUIRE(got.size() == want.size());
      CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
    }
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
