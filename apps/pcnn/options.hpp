// Option checks and the options train and bench share, so both spell them the same way: each
// takes the singular and the plural name (--backend/--backends, --model/--models,
// --batch-size/--batch-sizes). bench reads a comma list; train and eval take one value.
//
// The checks are CLI11 validators, so a bad value is a usage error (exit 2) raised while
// parsing. They word their own messages: CLI11's Range reports "not in range 2.22507e-308 to
// 1.79769e+308" for a positive number.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace pcnn::cli {

// A number >= min ("must be at least 1, got 0").
CLI::Validator at_least(double min);
// A number > min ("must be above 0, got 0").
CLI::Validator above(double min);
// One of names; what names the kind: "unknown optimizer 'rmsprop' (known: sgd, adam)", or
// "unknown backend 'opnemp' (did you mean 'openmp'? known: ...)". also: more words after the
// list (", or a .json spec file").
CLI::Validator one_of(const std::vector<std::string>& names, const std::string& what,
                      const std::string& also = "");
// A backend this project knows (compiled in or not: "not compiled in" is a run-time error).
CLI::Validator backend_name();
// A built-in model, or a path ending in .json.
CLI::Validator model_name();

// train, eval: one backend, model, batch size (a list is refused: bench compares several).
CLI::Option* add_backend_option(CLI::App& app, std::string& backend);
CLI::Option* add_model_option(CLI::App& app, std::string& model);
CLI::Option* add_batch_option(CLI::App& app, int& batch, const std::string& help);
// bench: comma lists under the same names.
CLI::Option* add_backend_option(CLI::App& app, std::vector<std::string>& backends);
CLI::Option* add_model_option(CLI::App& app, std::vector<std::string>& models);
CLI::Option* add_batch_option(CLI::App& app, std::vector<int>& batches, const std::string& help);

}  // namespace pcnn::cli
