// The subcommands of pcnn: each registers its options on a CLI11 sub-app and says how to run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace pcnn::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;  // after parsing; returns the exit code
};

// Exit codes, as the --help footer and the README state them.
constexpr int kExitSuccess = 0;
constexpr int kExitRuntimeError = 1;  // bad data, a backend not usable here, a failed write...
constexpr int kExitUsageError = 2;    // unknown command or option, missing or bad value

Command add_train_command(CLI::App& app);
Command add_eval_command(CLI::App& app);
Command add_predict_command(CLI::App& app);
Command add_backends_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_plot_command(CLI::App& app);
Command add_show_command(CLI::App& app);
Command add_help_command(CLI::App& app);

}  // namespace pcnn::cli
