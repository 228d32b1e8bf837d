// Wall-clock phases of one run (start-up, data, backend, model, steps, evaluation, outputs), for
// `pcnn train --timings` and the run summary. Phases may overlap (data decodes while the backend
// starts), so each keeps its own start: the table shows what ran beside what.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pcnn {

using SteadyTime = std::chrono::steady_clock::time_point;

struct Phase {
  std::string name;
  double start_s = 0;  // from the process's start
  double seconds = 0;
};

class RunTimings {
 public:
  // origin: the process's start on the steady clock (process_start_time()).
  explicit RunTimings(SteadyTime origin) : origin_(origin) {}

  // Thread-safe: loader threads add their own phases.
  void add(const std::string& name, SteadyTime start, SteadyTime end);
  // A phase made of parts (every epoch's evaluation): its first start and the parts' sum.
  void add_seconds(const std::string& name, SteadyTime start, double seconds);
  std::vector<Phase> phases() const;  // in the order added
  SteadyTime origin() const { return origin_; }

 private:
  SteadyTime origin_;
  mutable std::mutex mutex_;
  std::vector<Phase> phases_;
};

// When this process started, on the steady clock: /proc/self/stat's start time (in clock ticks,
// 10 ms on Linux) against CLOCK_BOOTTIME. Where /proc is not readable: now.
SteadyTime process_start_time();

// The table --timings prints: phase, start and seconds, then the whole run's seconds.
std::string timings_table(const std::vector<Phase>& phases, double total_s);
nlohmann::json timings_json(const std::vector<Phase>& phases);

}  // namespace pcnn
