// pcnn: train, evaluate and compare CNNs on the backends compiled into this build.
// Every error ends here as one line on stderr and exit code 1.
#include <cstdio>
#include <vector>

#include "apps/pcnn/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"ParallelCNN: train CNNs on serial, OpenMP, Kokkos, CUDA and cuDNN backends"};
  app.require_subcommand(1);
  const std::vector<pcnn::cli::Command> commands = {pcnn::cli::add_train_command(app),
                                                    pcnn::cli::add_eval_command(app),
                                                    pcnn::cli::add_backends_command(app),
                                                    pcnn::cli::add_bench_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pcnn: error: %s (see pcnn --help)\n", e.what());
    return e.get_exit_code() ? e.get_exit_code() : 1;
  }
  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pcnn: error: %s\n", e.what());
    return 1;
  }
  return 1;
}
