// The harness: the backends under test and the doctest report of a comparison.
#include "tests/harness.hpp"

#include <cmath>

#include "models/model.hpp"
#include "tests/synthetic.hpp"

namespace pcnn::test {

namespace {
std::unique_ptr<Backend> g_backend, g_reference;
std::string g_name = "serial";
}  // namespace

void set_backends(std::unique_ptr<Backend> under_test, std::unique_ptr<Backend> ref,
                  const std::string& name) {
  g_backend = std::move(under_test);
  g_reference = std::move(ref);
  g_name = name;
}
void drop_backends() {
  g_backend.reset();
  g_reference.reset();
}

Backend& backend() { return *g_backend; }
Backend& reference() { return *g_reference; }
const std::string& backend_name() { return g_name; }

TrainConfig adam_config(int batch, uint32_t seed, float lr) {
  TrainConfig cfg;
  cfg.batch = batch;
  cfg.seed = seed;
  cfg.optimizer.kind = "adam";
  cfg.optimizer.lr = lr;
  return cfg;
}

TrainedRun train_run(Backend& be, const ModelSpec& spec, uint64_t model_seed, const Dataset& data,
                     const TrainConfig& cfg, int epochs) {
  Model m(be, spec, cfg.batch, model_seed);
  Trainer t(be, m, data, kSyntheticNorm, cfg);
  TrainedRun r;
  for (int e = 0; e < epochs; ++e) {
    r.train_losses.push_back(t.train_epoch(e).train_loss);
    r.eval_losses.push_back(evaluate(be, m, data, kSyntheticNorm).loss);
  }
  r.params = m.get_params();
  r.state = m.get_state();
  return r;
}

void check_run_close(const std::string& what, const TrainedRun& got, const TrainedRun& want,
                     double tol) {
  REQUIRE(got.train_losses.size() == want.train_losses.size());
  // 1e-5 absolute as well, for a loss near zero.
  const auto close = [tol](double g, double w) {
    return std::fabs(g - w) <= tol * std::fabs(w) + 1e-5;
  };
  for (size_t e = 0; e < want.train_losses.size(); ++e) {
    INFO("backend " << backend_name() << ", " << what << ", epoch " << e + 1 << ": training loss "
                    << got.train_losses[e] << " vs serial " << want.train_losses[e]
                    << ", evaluation loss " << got.eval_losses[e] << " vs serial "
                    << want.eval_losses[e]);
    CHECK(close(got.train_losses[e], want.train_losses[e]));
    CHECK(close(got.eval_losses[e], want.eval_losses[e]));
  }
  check_close(what + ": parameters after the last epoch", got.params, want.params, tol);
  check_close(what + ": state after the last epoch", got.state, want.state, tol);
}

void check_close(const std::string& what, const std::vector<float>& got,
                 const std::vector<float>& want, double tol) {
  const Comparison c = compare(got, want, tol);
  CHECK_MESSAGE(c.ok, "backend " << backend_name() << ", " << what << ": " << c.detail);
}

}  // namespace pcnn::test
