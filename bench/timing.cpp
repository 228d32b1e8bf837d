// The block-timing loop shared by the whole-step, phase and per-layer measurements.
#include "bench/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace pcnn::bench {

namespace {
constexpr double kShortIteration = 1e-3;  // below this one iteration is grouped into blocks
constexpr double kBlockTarget = 2e-3;     // seconds a grouped block aims for
constexpr int kMaxBlock = 100000;
}  // namespace

double now_s() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

double synced_now_s(Backend& be) {
  be.synchronize();
  return now_s();
}

int block_size_for(double single_iteration_s) {
  if (single_iteration_s >= kShortIteration) return 1;
  const double t = std::max(single_iteration_s, 1e-7);
  return int(std::min<double>(kMaxBlock, std::ceil(kBlockTarget / t)));
}

RepeatLoop::RepeatLoop(const RepeatPolicy& p) : p_(p) {}

bool RepeatLoop::more() const {
  if (done_ >= p_.repeat) return false;
  if (done_ < std::min(p_.min_repeat, p_.repeat)) return true;
  return spent_ < p_.budget_s;
}

Summary time_blocks(Backend& be, const std::function<void()>& body, const RepeatPolicy& p) {
  for (int i = 0; i < p.warmup; ++i) body();
  double t0 = synced_now_s(be);
  body();
  const int block = block_size_for(synced_now_s(be) - t0);
  std::vector<double> samples;
  for (RepeatLoop loop(p); loop.more();) {
    t0 = synced_now_s(be);
    for (int k = 0; k < block; ++k) body();
    const double dt = synced_now_s(be) - t0;
    loop.add(dt);
    samples.push_back(dt / block);
  }
  return summarize(samples, block);
}

}  // namespace pcnn::bench
