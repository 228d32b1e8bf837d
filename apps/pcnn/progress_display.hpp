// Progress of pcnn train on stdout. On a terminal one line is redrawn in place about four times
// a second; into a pipe or file a plain line comes early in the run and then every 10 s (or
// every N steps with --progress-every), each flushed at once. Epoch lines and every other line
// go through print(), which first clears a redrawn line.
#pragma once

#include <string>

#include "train/trainer.hpp"

namespace pcnn::cli {

enum class ProgressStyle {
  Redraw,      // a terminal
  Timed,       // a pipe or file: the first report, then one every 10 s
  EverySteps,  // --progress-every N: every N-th step of each epoch
  Off,         // --quiet
};

// Redraw on a terminal, Timed otherwise; EverySteps when every_steps > 0; Off when quiet.
ProgressStyle choose_progress_style(bool quiet, int every_steps);

class ProgressDisplay {
 public:
  ProgressDisplay(ProgressStyle style, int epochs, int every_steps);
  ~ProgressDisplay();  // ends a redrawn line, so an error message starts on its own line
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // How often the trainer should report: seconds (0 = not by time) and steps (0 = not by steps).
  double poll_seconds() const;
  int poll_steps() const { return style_ == ProgressStyle::EverySteps ? every_steps_ : 0; }

  // A trainer report; elapsed_s counts from the start of training. Prints when one is due.
  void progress(const StepProgress& p, double elapsed_s);
  // A line of its own (epoch lines, the header...), flushed.
  void print(const std::string& line);

 private:
  void end_redrawn_line();
  ProgressStyle style_;
  int epochs_, every_steps_;
  bool line_open_ = false;           // a redrawn line is on screen, without its newline
  double last_line_s_ = -1;          // Timed: elapsed_s of the last progress line
};

}  // namespace pcnn::cli
