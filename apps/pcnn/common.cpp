// Shared helpers of the pcnn subcommands.
#include "apps/pcnn/common.hpp"

#include <sys/resource.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
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
void keep_first(Dataset& d, int n) {
  if (n <= 0 || n >= d.count) return;
  d.count = n;
  d.images.resize(size_t(n) * d.height * d.width);
  d.labels.resize(size_t(n));
}
}  // namespace

DatasetPair load_data(const std::string& dir, int limit) {
  const std::string d = dir.empty() ? default_data_dir() : dir;
  if (dir.empty()) {
    std::ifstream probe(d + "/train-labels-idx1-ubyte.gz");
    PCNN_CHECK(probe, "the default data set is missing: install Debian's dataset-fashion-mnist "
                      "(scripts/setup.sh does) or pass --data DIR");
  }
  DatasetPair data = load_mnist_folder(d);
  keep_first(data.train, limit);
  keep_first(data.test, limit);
  return data;
}

double peak_rss_mib() {
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace pcnn::cli
