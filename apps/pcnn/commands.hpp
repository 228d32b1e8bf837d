// The subcommands of pcnn: each registers its options on a CLI11 sub-app and says how to run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace pcnn::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;  // after parsing; returns the exit code
};

Command add_train_command(CLI::App& app);
Command add_eval_command(CLI::App& app);
Command add_backends_command(CLI::App& app);
Command add_bench_command(CLI::App& app);

}  // namespace pcnn::cli
