// What the subcommands share: choosing a backend, loading a model spec, loading the data.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "backends/registry.hpp"
#include "data/data_source.hpp"
#include "data/dataset.hpp"
#include "models/model_spec.hpp"

namespace pcnn::cli {

// "" picks the fastest backend usable here. Prints nothing; throws Error, or Unavailable with
// the reason said plainly (backends/unavailable_reason.hpp).
std::unique_ptr<Backend> open_backend(const std::string& name, int threads);

// A built-in model name, or a path to a JSON spec file.
ModelSpec load_spec(const std::string& name_or_path);

// The four MNIST-style files from dir ("" = the default Fashion-MNIST folder); with limit > 0,
// only the first limit images of each set (quick runs). Every label a byte can hold is read:
// the caller checks them against its model (DatasetPair::check_labels), so a model of 26
// classes takes labels 0..25 and a label past it is named with its index.
// format: --data-format ("" detects it from the files); a folder of images is converted to
// the model's input shape (in_c x in_h x in_w of spec).
// cache_dir: where decoded IDX files are kept between runs ("" = no cache).
DatasetPair load_data(const std::string& dir, int limit = 0, const std::string& format = "",
                      const ModelSpec* spec = nullptr, const std::string& cache_dir = "");

// --data-format, with the names it takes.
CLI::Option* add_data_format_option(CLI::App& app, std::string& format);

// Keeps only the first limit images of each set (limit <= 0: all of them).
void keep_first(DatasetPair& data, int limit);

// Before any model is built: refuses a batch larger than the training set (a usage error
// naming --batch-size), and says once, on stderr, how many images each epoch leaves out when
// the batch does not divide the training set (the trainer drops the last partial batch).
void check_batch_fits(const DatasetPair& data, int batch);

// A one-line warning on stderr: "pcnn COMMAND: warning: WHAT".
void warn(const std::string& command, const std::string& what);

// main() notes when it was entered; --timings measures start-up to there.
void note_main_entered();
std::chrono::steady_clock::time_point main_entered_time();

// Peak resident memory of this process so far, in MiB.
double peak_rss_mib();

}  // namespace pcnn::cli
