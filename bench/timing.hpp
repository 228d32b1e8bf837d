// Timing backend work honestly: warm-up excluded, every timed region starts and ends with the
// backend synchronised, a block of iterations per sample when one iteration is too short to time
// alone, and as many samples as asked for unless the time budget runs out first.
#pragma once

#include <functional>

#include "backends/backend.hpp"
#include "bench/stats.hpp"

namespace pcnn::bench {

struct RepeatPolicy {
  int warmup = 1;         // untimed iterations first
  int repeat = 10;        // timed blocks wanted
  int min_repeat = 3;     // blocks taken even past the budget (never more than repeat)
  double budget_s = 2.0;  // stop adding blocks once this much time went into them
};

// Seconds on the monotonic clock.
double now_s();

// Seconds on the monotonic clock once the backend has finished everything launched so far.
double synced_now_s(Backend& be);

// How many iterations one timed block needs, from the time of a single one: iterations shorter
// than a millisecond are grouped so a block lasts about two, keeping the synchronise small beside it.
int block_size_for(double single_iteration_s);

// Decides when a measurement has enough blocks: ask more() before each one, then add() it.
class RepeatLoop {
 public:
  explicit RepeatLoop(const RepeatPolicy& p);
  bool more() const;
  void add(double block_seconds) { spent_ += block_seconds; ++done_; }
  int done() const { return done_; }

 private:
  RepeatPolicy p_;
  int done_ = 0;
  double spent_ = 0;
};

// Times body() (which launches work on be): warm-up, one calibration run that sets the block
// size, then blocks until the policy is satisfied.
Summary time_blocks(Backend& be, const std::function<void()>& body, const RepeatPolicy& p);

}  // namespace pcnn::bench
