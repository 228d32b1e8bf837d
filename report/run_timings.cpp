// Phase records and the process start time from /proc (see run_timings.hpp).
#include "report/run_timings.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace pcnn {

void RunTimings::add(const std::string& name, SteadyTime start, SteadyTime end) {
  using sec = std::chrono::duration<double>;
  const Phase p{name, sec(start - origin_).count(), sec(end - start).count()};
  std::lock_guard<std::mutex> lock(mutex_);
  phases_.push_back(p);
}

void RunTimings::add_seconds(const std::string& name, SteadyTime start, double seconds) {
  const Phase p{name, std::chrono::duration<double>(start - origin_).count(), seconds};
  std::lock_guard<std::mutex> lock(mutex_);
  phases_.push_back(p);
}

std::vector<Phase> RunTimings::phases() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return phases_;
}

SteadyTime process_start_time() {
  const SteadyTime now = std::chrono::steady_clock::now();
  std::ifstream in("/proc/self/stat");
  std::string stat;
  std::getline(in, stat);
  // Field 2 (the command name) may hold spaces and parentheses: count from the last ')'.
  const size_t close = stat.rfind(')');
  timespec boot{};
  const long ticks = sysconf(_SC_CLK_TCK);
  if (close == std::string::npos || ticks <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
    return now;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  unsigned long long start_ticks = 0;
  for (int i = 3; i <= 22 && fields >> field; ++i)  // field 22: starttime
    if (i == 22) start_ticks = std::stoull(field);
  const double since_boot = double(boot.tv_sec) + double(boot.tv_nsec) * 1e-9;
  const double age = since_boot - double(start_ticks) / double(ticks);
  if (!(age >= 0) || age > 1e6) return now;  // not a plausible age: keep the clock honest
  return now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(age));
}

std::string timings_table(const std::vector<Phase>& phases, double total_s) {
  size_t width = 5;
  for (const Phase& p : phases) width = std::max(width, p.name.size());
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %8s  %8s\n", int(width), "phase", "start s", "seconds");
  out += line;
  for (const Phase& p : phases) {
    std::snprintf(line, sizeof line, "%-*s  %8.3f  %8.3f\n", int(width), p.name.c_str(),
                  p.start_s, p.seconds);
    out += line;
  }
  std::snprintf(line, sizeof line, "%-*s  %8s  %8.3f", int(width), "whole process", "",
                total_s);
  return out + line;
}

nlohmann::json timings_json(const std::vector<Phase>& phases) {
  nlohmann::json a = nlohmann::json::array();
  for (const Phase& p : phases)
    a.push_back({{"phase", p.name}, {"start_s", p.start_s}, {"seconds", p.seconds}});
  return a;
}

}  // namespace pcnn
