// Command-line reading the examples share, so that each of them shows the library, not argv.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace example {

// A whole decimal number from `least` to 10^9, or -1.
inline int to_int(const std::string& text, int least) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && v >= least && v <= 1000000000 ? int(v) : -1;
}

// Reads the command line PROGRAM ARG... [COUNT] [BACKEND], where `required` arguments come before
// COUNT (usage: the names of all of them, for the usage line): COUNT, a whole number >= 1, into
// `count` (kept when it is left out), BACKEND into `backend` ("" when left out: the fastest one
// usable here). A command line too short or a bad COUNT: one line on stderr, and false.
inline bool read_count_and_backend(int argc, char** argv, int required, const char* usage,
                                   const char* count_name, int& count, const char*& backend) {
  if (argc < 1 + required) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    return false;
  }
  const char* slash = std::strrchr(argv[0], '/');
  const char* program = slash ? slash + 1 : argv[0];
  if (argc > 1 + required) {
    const char* text = argv[1 + required];
    count = to_int(text, 1);
    if (count < 0) {
      std::fprintf(stderr, "%s: %s must be a whole number >= 1, got '%s'\n", program, count_name,
                   text);
      return false;
    }
  }
  backend = argc > 2 + required ? argv[2 + required] : "";
  return true;
}

}  // namespace example
