// OpenMP threads wait passively (asleep at barriers and between regions, not spinning) when
// other processes were busy as the program started, unless the user chose a policy with
// OMP_WAIT_POLICY or GOMP_SPINCOUNT. Beside one busy process on the 2-core machine libgomp's
// default (spin first) let a LeNet-5 step at batch 64 on 2 threads take 40-860 ms, slower than
// serial, where passive waiting took 4-12 ms; on a quiet machine spinning is faster (2.1 against
// 3.9 ms at best). Figures: notes/tuning-openmp.md, Contention.
//
// How: libgomp reads OMP_WAIT_POLICY once, in its constructor, which runs before any static
// initializer of the program, so setenv from the program comes too late (and setenv from the
// executable's .preinit_array, which runs earlier, is undone by libc's start-up: both tried).
// libgomp reads it through getenv, though, and the getenv an executable defines is the one every
// shared library calls: this one answers as the C library would, but for OMP_WAIT_POLICY when
// the user set neither variable. It is linked wherever the openmp backend is (the backend's
// device_name() calls wait_policy() below).
#include <strings.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/openmp/free_cpus.hpp"
#include "backends/openmp/parallel.hpp"

extern "C" char** environ;

namespace {
char* lookup(const char* key, size_t len) {
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, key, len) == 0 && (*e)[len] == '=') return *e + len + 1;
  return nullptr;
}

// Whether another process kept a CPU busy through five readings 1 ms apart (the program has one
// thread now, so more than one runnable thread is someone else's; a short-lived system task is
// rarely there five times).
bool others_busy() {
  for (int i = 0; i < 5; ++i) {
    if (i) {
      const timespec ms{0, 1000000};
      nanosleep(&ms, nullptr);
    }
    if (pcnn::omp::machine_running() <= 1) return false;
  }
  return true;
}

bool user_chose() {
  return lookup("OMP_WAIT_POLICY", 15) || lookup("GOMP_SPINCOUNT", 14);
}

// Decided once: libgomp asks first, and the answer must stay the same for device_name(). No
// guarded static: the first call comes from libgomp's constructor (one thread, and possibly
// before the C++ runtime has started).
int decided = -1;
bool passive_by_default() {
  if (decided < 0) decided = !user_chose() && others_busy();
  return decided == 1;
}
}  // namespace

extern "C" char* getenv(const char* name) noexcept {
  if (char* value = lookup(name, std::strlen(name))) return value;
  static char passive[] = "passive";
  if (std::strcmp(name, "OMP_WAIT_POLICY") == 0 && passive_by_default()) return passive;
  return nullptr;
}

namespace pcnn::omp {

const char* wait_policy() {
  if (user_chose()) return lookup("GOMP_SPINCOUNT", 14) && !lookup("OMP_WAIT_POLICY", 15)
                               ? "wait as GOMP_SPINCOUNT says"
                               : "wait as OMP_WAIT_POLICY says";
  return passive_by_default() ? "passive wait (other processes were busy at start)"
                              : "spinning wait (the machine was quiet at start)";
}

bool spinning_wait() {
  const char* policy = getenv("OMP_WAIT_POLICY");  // ours: the user's, or the default chosen
  if (policy) return strcasecmp(policy, "passive") != 0;
  const char* spin = lookup("GOMP_SPINCOUNT", 14);
  return !spin || std::strtod(spin, nullptr) != 0;  // "0" spins not at all
}

}  // namespace pcnn::omp
