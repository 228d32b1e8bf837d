// The harness: the backends under test, random data and the comparison that reports mismatches.
#include "tests/harness.hpp"

#include <sstream>

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

std::vector<float> random_vector(size_t n, uint64_t seed, float lo, float hi) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

DeviceArray<float> poisoned(Backend& be, size_t n) {
  DeviceArray<float> a(be, n);
  be.fill(a.get(), std::nanf(""), n);
  return a;
}

double normalized_error(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return NAN;
    const double d = double(got[i]) - want[i];
    num += d * d;
    den += double(want[i]) * want[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

void check_close(const std::string& what, const std::vector<float>& got,
                 const std::vector<float>& want, double tol) {
  INFO("backend " << backend_name() << ", " << what);
  REQUIRE(got.size() == want.size());
  const double err = normalized_error(got, want);
  if (!(err <= tol)) {
    std::ostringstream os;
    int shown = 0;
    for (size_t i = 0; i < got.size() && shown < 5; ++i) {
      const double scale = std::max(1e-6, double(std::fabs(want[i])));
      if (!std::isfinite(got[i]) || std::fabs(got[i] - want[i]) > 10 * tol * scale + 1e-6) {
        os << " [" << i << "] got " << got[i] << " want " << want[i] << ";";
        ++shown;
      }
    }
    FAIL_CHECK("normalised error " << err << " > tolerance " << tol << "; first mismatches:"
                                   << os.str());
  }
}

}  // namespace pcnn::test
