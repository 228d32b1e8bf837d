// Where and when a bench ran: host CPU, date, this process's command line and executable.
#pragma once

#include <string>
#include <vector>

namespace pcnn::bench {

std::string host_cpu_model();    // "model name" of /proc/cpuinfo ("unknown CPU" if unreadable)
int host_cpu_threads();          // hardware threads (at least 1)
double host_load_average();      // 1-minute load average from /proc/loadavg (-1 if unreadable)
std::vector<double> host_load_averages();  // 1, 5 and 15 minutes (empty if unreadable)

// Physical cores against hardware threads (SMT siblings share a core).
struct CpuTopology {
  int packages = 0, physical_cores = 0, hardware_threads = 0;  // 0: not known
  std::string source;  // "hwloc (API <version>)" or "/sys/devices/system/cpu" or "unknown"
};
CpuTopology host_topology();
std::string utc_date_iso();      // e.g. "2024-05-01T12:00:00Z"
std::string own_command_line();  // this process's argv from /proc/self/cmdline, space-joined
std::string own_executable();    // /proc/self/exe resolved ("" if unreadable)

}  // namespace pcnn::bench
