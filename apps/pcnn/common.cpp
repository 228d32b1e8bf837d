// Shared helpers of the pcnn subcommands.
#include "apps/pcnn/common.hpp"

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apps/pcnn/options.hpp"
#include "core/check.hpp"
#include "data/subset.hpp"
#include "backends/unavailable_reason.hpp"

namespace pcnn::cli {

std::unique_ptr<Backend> open_backend(const std::string& name, int threads) {
  BackendOptions opts;
  opts.threads = threads;
  const std::string chosen = name.empty() ? fastest_usable_backend(opts) : name;
  try {
    return make_backend(chosen, opts);
  } catch (const Unavailable& e) {
    throw Unavailable("backend " + chosen + " cannot run here: " +
                      unavailable_reason(chosen, e.what()));
  }
}

ModelSpec load_spec(const std::string& name_or_path) { return load_model_spec(name_or_path); }

namespace {
// Labels are single bytes in IDX files: this bound accepts all of them.
constexpr int kByteLabels = 256;
}  // namespace

void keep_first(DatasetPair& data, int limit) {
  keep_first(data.train, limit);
  keep_first(data.test, limit);
}

DatasetPair load_data(const std::string& dir, int limit, const std::string& format,
                      const ModelSpec* spec, const std::string& cache_dir) {
  const std::string d = dir.empty() ? default_data_dir() : dir;
  if (dir.empty()) {
    std::ifstream probe(d + "/train-labels-idx1-ubyte.gz");
    PCNN_CHECK(probe, "the default data set is missing: install Debian's dataset-fashion-mnist "
                      "(scripts/setup.sh does) or pass --data DIR");
  }
  ImageShape shape;
  if (spec) shape = {spec->in_c, spec->in_h, spec->in_w};
  DatasetPair data = load_dataset(d, parse_data_format(format), shape, kByteLabels, cache_dir);
  keep_first(data, limit);
  return data;
}

CLI::Option* add_data_format_option(CLI::App& app, std::string& format) {
  return app.add_option("--data-format", format,
                        "format of the --data folder: idx (MNIST-style files), cifar10, cifar100 "
                        "(the binary versions) or folder (train/ and test/ with a sub-folder of "
                        "PNG/JPEG images per class); default: detected from the files")
      ->check(one_of(data_format_names(), "data format"));
}

void check_batch_fits(const DatasetPair& data, int batch) {
  const int count = data.train.count;
  if (batch > count)
    throw CLI::ValidationError("--batch-size", std::to_string(batch) + " is more than the " +
                               std::to_string(count) + " training images in " + data.source);
  // Said only where it matters: under 1 % (Fashion-MNIST's 32 of 60000 at batch 64) is noise, and
  // which images sit out changes every epoch with the shuffle.
  const int dropped = count % batch;
  if (dropped != 0 && int64_t(dropped) * 100 >= count)
    warn("pcnn train", "the batch size " + std::to_string(batch) + " does not divide the " +
                           std::to_string(count) + " training images: each epoch leaves out " +
                           std::to_string(dropped) + " (the end of its shuffled order: other "
                           "images each epoch)");
}

void warn(const std::string& command, const std::string& what) {
  std::fflush(stdout);  // after what was already printed, where both go to one terminal
  std::fprintf(stderr, "%s: warning: %s\n", command.c_str(), what.c_str());
  std::fflush(stderr);
}

namespace {
std::chrono::steady_clock::time_point g_main_entered = std::chrono::steady_clock::now();
}  // namespace

void note_main_entered() { g_main_entered = std::chrono::steady_clock::now(); }
std::chrono::steady_clock::time_point main_entered_time() { return g_main_entered; }

double peak_rss_mib() {
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace pcnn::cli
