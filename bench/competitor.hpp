// A competing busy process for `pcnn bench --contention`: one forked child spinning at nice 19,
// the usual shape of "someone else is using a core" on a shared machine.
#pragma once

#include <sys/types.h>

namespace pcnn::bench {

// Starts the child on construction, kills and reaps it on destruction (and it dies with this
// process). Throws Error if fork fails.
class Competitor {
 public:
  Competitor();
  ~Competitor();
  Competitor(const Competitor&) = delete;
  Competitor& operator=(const Competitor&) = delete;

 private:
  pid_t pid_ = -1;
};

// What the competitor is, for reports.
const char* competitor_description();

}  // namespace pcnn::bench
