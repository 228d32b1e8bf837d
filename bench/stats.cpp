// Quantiles by linear interpolation between order statistics (the usual "type 7" definition),
// so the median of an even count is the mean of the middle two.
#include "bench/stats.hpp"

#include <algorithm>

namespace pcnn::bench {

namespace {
double quantile(const std::vector<double>& sorted, double p) {
  const double pos = p * double(sorted.size() - 1);
  const size_t lo = size_t(pos), hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
}
}  // namespace

Summary summarize(std::vector<double> v, int block) {
  Summary s;
  s.block = block;
  s.samples = int(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = quantile(v, 0.5);
  s.q1 = quantile(v, 0.25);
  s.q3 = quantile(v, 0.75);
  return s;
}

}  // namespace pcnn::bench
