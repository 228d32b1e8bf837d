// pcnn: train, evaluate and compare CNNs on the backends compiled into this build.
// Every error ends here as one line on stderr: exit code 2 for a usage error (the line names
// the word at fault and the --help to read), 1 for an error at run time.
#include <cstdio>
#include <vector>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/common.hpp"
#include "apps/pcnn/usage_errors.hpp"
#include "apps/pcnn/version.hpp"

namespace {
const char* kFooter =
    "Exit codes: 0 success; 1 run-time error (missing or corrupt files, a backend not usable "
    "here, gradients not finite); 2 usage error (unknown command or option, missing or bad "
    "value); 130 stopped by SIGINT or SIGTERM (checkpoint and model written first).\n"
    "'pcnn help COMMAND' shows a command's options; README.md has examples.";
}  // namespace

int main(int argc, char** argv) {
  using namespace pcnn::cli;
  note_main_entered();
  CLI::App app{"ParallelCNN: train CNNs on serial, OpenMP, Kokkos, CUDA and cuDNN backends", "pcnn"};
  // Set before the subcommands are added: they inherit these.
  app.footer(kFooter);
  app.allow_extras();  // reject_extras() names an unknown word and the closest valid one
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", [] { return version_text(); },
                       "Print the version, the commit and the backends compiled in");
  const std::vector<Command> commands = {add_train_command(app), add_eval_command(app),
                                         add_predict_command(app),
                                         add_bench_command(app), add_backends_command(app),
                                         add_plot_command(app),  add_show_command(app),
                                         add_help_command(app)};
  try {
    app.parse(argc, argv);
    reject_extras(app);
    for (const Command& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const CLI::ParseError& e) {  // also usage errors found while running (--gpus)
    if (e.get_exit_code() == kExitSuccess) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "%s\n", usage_error_line(app, e).c_str());
    return kExitUsageError;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "pcnn: error: %s\n", e.what());
    return kExitRuntimeError;
  }
  std::fprintf(stderr, "%s", app.help().c_str());  // no command given
  return kExitUsageError;
}
