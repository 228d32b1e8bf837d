// "\r" and the ANSI erase-line code redraw in place; only a terminal gets them.
#include "apps/pcnn/progress_display.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include "report/number_format.hpp"

namespace pcnn::cli {

namespace {
constexpr double kRedrawSeconds = 0.25;  // a terminal: smooth enough, and 4 reads a second
constexpr double kTimedPollSeconds = 1;  // a pipe: the first line after about a second...
constexpr double kTimedLineSeconds = 10;  // ...and then one every 10 s

std::string progress_text(const StepProgress& p, int epochs, double elapsed_s) {
  const double per_step = p.step ? p.seconds / p.step : 0;
  char buf[160];
  std::snprintf(buf, sizeof buf, "epoch %2d/%d  step %*d/%d  loss %.4f  %.0f images/s  ",
                p.epoch, epochs, int(std::to_string(p.steps).size()), p.step, p.steps,
                p.images ? p.loss_sum / double(p.images) : 0.0,
                p.seconds > 0 ? double(p.images) / p.seconds : 0.0);
  return buf + ("elapsed " + duration_text(elapsed_s) + "  ETA " +
                duration_text(per_step * (p.steps - p.step)));
}
}  // namespace

ProgressStyle choose_progress_style(bool quiet, int every_steps) {
  if (quiet) return ProgressStyle::Off;
  if (every_steps > 0) return ProgressStyle::EverySteps;
  return isatty(fileno(stdout)) ? ProgressStyle::Redraw : ProgressStyle::Timed;
}

ProgressDisplay::ProgressDisplay(ProgressStyle style, int epochs, int every_steps)
    : style_(style), epochs_(epochs), every_steps_(every_steps) {}

ProgressDisplay::~ProgressDisplay() { end_redrawn_line(); }

double ProgressDisplay::poll_seconds() const {
  switch (style_) {
    case ProgressStyle::Redraw: return kRedrawSeconds;
    case ProgressStyle::Timed: return kTimedPollSeconds;
    default: return 0;
  }
}

void ProgressDisplay::progress(const StepProgress& p, double elapsed_s) {
  switch (style_) {
    case ProgressStyle::Redraw: {
      // A line wider than the terminal would wrap, and "\r" would redraw only its last row.
      std::string text = progress_text(p, epochs_, elapsed_s);
      winsize ws{};
      if (ioctl(fileno(stdout), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && text.size() >= ws.ws_col)
        text.resize(ws.ws_col - 1);
      std::printf("\r\033[K%s", text.c_str());
      std::fflush(stdout);
      line_open_ = true;
      return;
    }
    case ProgressStyle::Timed:
      if (last_line_s_ >= 0 && elapsed_s - last_line_s_ < kTimedLineSeconds) return;
      last_line_s_ = elapsed_s;
      print(progress_text(p, epochs_, elapsed_s));
      return;
    case ProgressStyle::EverySteps:
      if (p.step % every_steps_ == 0) print(progress_text(p, epochs_, elapsed_s));
      return;
    case ProgressStyle::Off: return;
  }
}

void ProgressDisplay::print(const std::string& line) {
  end_redrawn_line();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void ProgressDisplay::end_redrawn_line() {
  if (!line_open_) return;
  std::printf("\r\033[K");
  std::fflush(stdout);
  line_open_ = false;
}

}  // namespace pcnn::cli
