// pcnn backends: what is compiled in, whether each one can run here (and on what), its traits.
#include <algorithm>
#include <cstdio>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/options.hpp"
#include "backends/registry.hpp"
#include "core/check.hpp"
#include "backends/unavailable_reason.hpp"

namespace pcnn::cli {

namespace {
using Row = std::vector<std::string>;

// Columns as wide as their widest cell, two spaces apart; the last one is not padded.
void print_table(const std::vector<Row>& rows) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const Row& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (const Row& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c)
      line += c + 1 < r.size() ? r[c] + std::string(width[c] - r[c].size() + 2, ' ') : r[c];
    std::printf("%s\n", line.c_str());
  }
}

int list_backends(int threads) {
  std::vector<Row> rows = {{"backend", "usable", "what it is", "traits", "runs on (or why not)"}};
  for (const auto& e : compiled_backends()) {
    BackendOptions opts;
    opts.threads = threads;
    try {
      rows.push_back({e.name, "yes", e.summary, describe_traits(e), e.create(opts)->device_name()});
    } catch (const Unavailable& u) {
      rows.push_back({e.name, "no", e.summary, describe_traits(e), unavailable_reason(e.name, u.what())});
    }
  }
  print_table(rows);
  for (const auto& e : known_backends())
    if (!e.create) std::printf("not compiled in: %s (%s)\n", e.name.c_str(), e.not_built_why.c_str());
  return kExitSuccess;
}
}  // namespace

Command add_backends_command(CLI::App& app) {
  auto threads = std::make_shared<int>(0);
  auto* sub = app.add_subcommand("backends", "List the backends compiled in and usable here");
  add_threads_option(*sub, *threads, "CPU threads for the CPU backends (0 = all cores)");
  return {sub, [threads] { return list_backends(*threads); }};
}

}  // namespace pcnn::cli
