// Where and when a bench ran: host CPU, date, this process's command line and executable.
#pragma once

#include <string>

namespace pcnn::bench {

std::string host_cpu_model();    // "model name" of /proc/cpuinfo ("unknown CPU" if unreadable)
int host_cpu_threads();          // hardware threads (at least 1)
double host_load_average();      // 1-minute load average from /proc/loadavg (-1 if unreadable)
std::string utc_date_iso();      // e.g. "2024-05-01T12:00:00Z"
std::string own_command_line();  // this process's argv from /proc/self/cmdline, space-joined
std::string own_executable();    // /proc/self/exe resolved ("" if unreadable)

}  // namespace pcnn::bench
