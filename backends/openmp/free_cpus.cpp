// Reads /proc (Linux): procs_running counts every runnable thread of the machine, this process's
// /proc/self/task/*/stat its own ones.
#include "backends/openmp/free_cpus.hpp"

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pcnn::omp {

// Plain stdio: wait_policy.cpp calls this inside libgomp's constructor, before the C++
// library's streams are set up.
int machine_running() {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return -1;
  char line[256];
  int n = -1;
  while (n < 0 && std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "procs_running ", 14) == 0) n = std::atoi(line + 14);
  std::fclose(f);
  return n;
}

namespace {

int own_running() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return 0;
  int n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    char path[300], buf[512];
    std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    std::FILE* f = std::fopen(path, "r");
    if (!f) continue;
    const size_t len = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[len] = '\0';
    const char* close = std::strrchr(buf, ')');  // the name may hold spaces and parentheses
    if (close && close[1] == ' ' && close[2] == 'R') ++n;
  }
  closedir(dir);
  return n;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

int busy_elsewhere() {
  const int all = machine_running();
  if (all < 0) return 0;
  return std::max(0, all - own_running());
}

int free_cpus_now() { return std::max(1, allowed_cpus() - busy_elsewhere()); }

FreeCpuTracker::FreeCpuTracker(int most, double interval_s)
    : most_(std::max(1, most)), interval_s_(interval_s) {
  std::fill(readings_, readings_ + kReadings, most_);
}

int FreeCpuTracker::team() {
  const double t = now_s();
  if (t - last_s_ < interval_s_) return team_;
  last_s_ = t;
  readings_[next_] = std::min(most_, free_cpus_now());
  next_ = (next_ + 1) % kReadings;
  count_ = std::min(count_ + 1, kReadings);
  // The median: the reading with as many others below it as above (five at most, so count).
  for (int i = 0; i < count_; ++i) {
    int below = 0, same = 0;
    for (int k = 0; k < count_; ++k)
      below += readings_[k] < readings_[i], same += readings_[k] == readings_[i];
    if (below <= count_ / 2 && count_ / 2 < below + same) team_ = readings_[i];
  }
  return team_;
}

}  // namespace pcnn::omp
