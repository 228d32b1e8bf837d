// fork, then in the child only async-signal-safe calls (the parent may have OpenMP threads).
#include "bench/competitor.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/check.hpp"

namespace pcnn::bench {

Competitor::Competitor() {
  pid_ = fork();
  PCNN_CHECK(pid_ >= 0, "cannot start the competing busy process (fork failed)");
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the bench
    setpriority(PRIO_PROCESS, 0, 19);
    volatile unsigned long spin = 0;
    for (;;) spin = spin + 1;
  }
}

Competitor::~Competitor() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

const char* competitor_description() {
  return "one busy process at nice 19 (a forked child spinning in a loop)";
}

}  // namespace pcnn::bench
