// Host facts read from /proc (Linux): enough for a result file to say what machine it is from.
#include "bench/host_info.hpp"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <utility>

#ifdef PCNN_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace pcnn::bench {

std::string host_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "unknown CPU" : line.substr(start);
  }
  return "unknown CPU";
}

int host_cpu_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? int(n) : 1;
}

double host_load_average() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  return in >> load ? load : -1;
}

std::vector<double> host_load_averages() {
  std::ifstream in("/proc/loadavg");
  std::vector<double> v(3);
  if (!(in >> v[0] >> v[1] >> v[2])) return {};
  return v;
}

namespace {
#ifdef PCNN_HAVE_HWLOC
CpuTopology topology_from_hwloc() {
  CpuTopology t;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return t;
  if (hwloc_topology_load(topo) == 0) {
    t.packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    t.physical_cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    t.hardware_threads = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    const unsigned v = hwloc_get_api_version();
    t.source = "hwloc (API " + std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
               std::to_string(v & 0xff) + ")";
  }
  hwloc_topology_destroy(topo);
  return t;
}
#endif

int read_int(const std::string& path) {
  std::ifstream in(path);
  int v = -1;
  return in >> v ? v : -1;
}

// Every online CPU's (package, core) pair from /sys: distinct pairs are physical cores.
CpuTopology topology_from_sys() {
  CpuTopology t;
  std::set<std::pair<int, int>> cores;
  std::set<int> packages;
  const std::string base = "/sys/devices/system/cpu/cpu";
  for (int cpu = 0; cpu < 65536; ++cpu) {
    const std::string dir = base + std::to_string(cpu);
    const int package = read_int(dir + "/topology/physical_package_id");
    const int core = read_int(dir + "/topology/core_id");
    if (package < 0 || core < 0) {
      if (read_int(dir + "/online") == 0) continue;  // offline: no topology, more may follow
      break;
    }
    cores.insert({package, core});
    packages.insert(package);
    ++t.hardware_threads;
  }
  if (t.hardware_threads == 0) return t;
  t.packages = int(packages.size());
  t.physical_cores = int(cores.size());
  t.source = "/sys/devices/system/cpu";
  return t;
}
}  // namespace

CpuTopology host_topology() {
#ifdef PCNN_HAVE_HWLOC
  CpuTopology h = topology_from_hwloc();
  if (h.physical_cores > 0) return h;
#endif
  CpuTopology t = topology_from_sys();
  if (t.physical_cores > 0) return t;
  t.hardware_threads = host_cpu_threads();
  t.source = "unknown";
  return t;
}

std::string utc_date_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : raw) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string own_executable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

}  // namespace pcnn::bench
