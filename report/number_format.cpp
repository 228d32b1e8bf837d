// Shortest round-trip text through std::to_chars (C++17), which also never depends on the locale.
#include "report/number_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace pcnn {

std::string round_trip(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string round_trip(float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string duration_text(double seconds) {
  char buf[32];
  const long s = std::lround(seconds);
  if (seconds < 60) std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, s / 60 % 60);
  return buf;
}

}  // namespace pcnn
