// Random inputs, poisoned outputs and the comparison that says where a mismatch is.
#include "tests/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace pcnn::test {

namespace {
constexpr int kShownMismatches = 5;
}  // namespace

std::vector<float> uniform(Rng& rng, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

std::vector<float> random_vector(size_t n, uint64_t seed, float lo, float hi) {
  Rng rng(seed);
  return uniform(rng, n, lo, hi);
}

void poison(Backend& be, DeviceArray<float>& a) { be.fill(a.get(), std::nanf(""), a.size()); }

DeviceArray<float> poisoned(Backend& be, size_t n) {
  DeviceArray<float> a(be, n);
  poison(be, a);
  return a;
}

double normalized_error(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return NAN;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return NAN;
    const double d = double(got[i]) - want[i];
    num += d * d;
    den += double(want[i]) * want[i];
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

Comparison compare(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  Comparison c;
  std::ostringstream os;
  if (got.size() != want.size()) {
    c.ok = false;
    c.error = NAN;
    os << "size " << got.size() << ", want " << want.size();
    c.detail = os.str();
    return c;
  }
  c.error = normalized_error(got, want);
  if (c.error <= tol) return c;
  c.ok = false;
  const bool finite = std::isfinite(c.error);
  if (finite) os << "normalised error " << c.error << " > tolerance " << tol;
  else os << "non-finite output (NaN: unwritten or invalid)";
  os << "; first mismatches:";
  int shown = 0;
  for (size_t i = 0; i < got.size() && shown < kShownMismatches; ++i) {
    const double scale = std::max(1e-6, double(std::fabs(want[i])));
    // Non-finite first: with NaNs in got the error says nothing about the finite elements.
    const bool bad = finite ? std::fabs(got[i] - want[i]) > 10 * tol * scale + 1e-6
                            : !std::isfinite(got[i]);
    if (bad) {
      os << " [" << i << "] got " << got[i] << " want " << want[i] << ";";
      ++shown;
    }
  }
  if (shown == 0) {  // many small errors, none large: name the largest
    size_t worst = 0;
    for (size_t i = 1; i < got.size(); ++i)
      if (std::fabs(got[i] - want[i]) > std::fabs(got[worst] - want[worst])) worst = i;
    os << " largest at [" << worst << "] got " << got[worst] << " want " << want[worst];
  }
  c.detail = os.str();
  return c;
}

}  // namespace pcnn::test
