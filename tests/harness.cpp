// The harness: the backends under test and the doctest report of a comparison.
#include "tests/harness.hpp"

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

void check_close(const std::string& what, const std::vector<float>& got,
                 const std::vector<float>& want, double tol) {
  const Comparison c = compare(got, want, tol);
  CHECK_MESSAGE(c.ok, "backend " << backend_name() << ", " << what << ": " << c.detail);
}

}  // namespace pcnn::test
