// pcnn plot: draw the training curves again from a log written by pcnn train --log.
#include <cstdio>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/options.hpp"
#include "report/training_plot.hpp"

namespace pcnn::cli {

Command add_plot_command(CLI::App& app) {
  struct Options { std::string log, out, title = "training"; };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand("plot", "Draw training curves (SVG) from a pcnn train --log file");
  add_path_option(*sub, "--log", o->log, "CSV written by pcnn train --log")->required();
  add_path_option(*sub, "--out,-o", o->out, "SVG file to write")->required();
  sub->add_option("--title", o->title, "what the charts are titled with")->capture_default_str();
  return {sub, [o] {
            write_training_plot(o->out, o->title, read_training_log(o->log));
            std::printf("wrote training curves to %s\n", o->out.c_str());
            return kExitSuccess;
          }};
}

}  // namespace pcnn::cli
