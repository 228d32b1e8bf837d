// Usage errors (exit code 2) said in one line that names the word at fault, suggests the closest
// valid one, and points at the --help to read:
//   pcnn train: error: unknown option '--epoch' (did you mean '--epochs'?); see 'pcnn train --help'
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace pcnn::cli {

// The (sub)command whose arguments were being read: the deepest one the parse reached.
const CLI::App& command_in_use(const CLI::App& app);

// "pcnn train" for the train subcommand, "pcnn" for the program.
std::string command_path(const CLI::App& command);

// Every app allows extras, so that an unknown word is caught here, where the closest valid one
// can be named (CLI11 alone lists leftovers as "not expected"). Throws CLI::ParseError.
void reject_extras(const CLI::App& app);

// The one line (no newline) for a usage error raised while parsing or running.
std::string usage_error_line(const CLI::App& app, const CLI::ParseError& e);

// Names of a command's options ("--epochs", "-e", ...) and of the program's subcommands.
std::vector<std::string> option_names(const CLI::App& command);
std::vector<std::string> subcommand_names(const CLI::App& app);

}  // namespace pcnn::cli
