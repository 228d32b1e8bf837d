// What the subcommands share: choosing a backend, loading a model spec, loading the data.
#pragma once

#include <memory>
#include <string>

#include "backends/registry.hpp"
#include "data/dataset.hpp"
#include "models/model_spec.hpp"

namespace pcnn::cli {

// "" picks the fastest backend usable here. Prints nothing; throws Error, or Unavailable with
// the reason said plainly (backends/unavailable_reason.hpp).
std::unique_ptr<Backend> open_backend(const std::string& name, int threads);

// A built-in model name, or a path to a JSON spec file.
ModelSpec load_spec(const std::string& name_or_path);

// The four MNIST-style files from dir ("" = the default Fashion-MNIST folder); with limit > 0,
// only the first limit images of each set (quick runs).
DatasetPair load_data(const std::string& dir, int limit = 0);

// Peak resident memory of this process so far, in MiB.
double peak_rss_mib();

}  // namespace pcnn::cli
