// How many CPUs this process can use right now: those its affinity mask allows, less those other
// processes keep busy. While libgomp spins at barriers (its default, kept when the machine was
// quiet at start: wait_policy.cpp), a team larger than the free CPUs waits for the scheduler
// tick at every barrier, so the openmp backend then sizes its team by this when no thread count
// was asked for (notes/tuning-openmp.md, Contention).
#pragma once

namespace pcnn::omp {

// Runnable threads of the whole machine (procs_running of /proc/stat; -1 if unreadable).
int machine_running();

// CPUs in this process's affinity mask (at least 1).
int allowed_cpus();

// Runnable threads of other processes: procs_running of /proc/stat less this process's threads
// in state R (a spinning OpenMP worker is ours, not a competitor). 0 when /proc is unreadable.
int busy_elsewhere();

// One reading of allowed_cpus() - busy_elsewhere(), at least 1.
int free_cpus_now();

// Follows the free CPUs over time: a reading every `interval_s` at most, the team size being the
// median of the last few readings (one short compile job should not halve the team), between 1
// and `most`.
class FreeCpuTracker {
 public:
  explicit FreeCpuTracker(int most, double interval_s = 0.25);
  // The team size to use now (reads /proc when the interval has passed).
  int team();

 private:
  static constexpr int kReadings = 5;
  int most_;
  double interval_s_, last_s_ = -1e300;
  int readings_[kReadings];
  int count_ = 0, next_ = 0, team_ = 1;
};

}  // namespace pcnn::omp
