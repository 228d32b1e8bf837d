// Option checks and the options train and bench share, so both spell them the same way: each
// takes the singular and the plural name (--backend/--backends, --model/--models,
// --batch-size/--batch-sizes). bench reads a comma list; train and eval take one value.
//
// The checks are CLI11 validators, so a bad value is a usage error (exit 2) raised while
// parsing. They read the text exactly as CLI11 then converts it for the option (so "+0" or
// "0x0" cannot slip past a check that reads numbers differently), and word their own messages:
// CLI11's Range reports "not in range 2.22507e-308 to 1.79769e+308" for a positive number.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace pcnn::cli {

// The bounds of the numeric options, one place for the checks, the help and the README.
constexpr int64_t kMaxEpochs = 100000;
constexpr int64_t kMaxBatch = 65536;
constexpr int64_t kMaxThreads = 1024;     // libgomp crashes at 100000 threads and hangs at 5000
constexpr int64_t kMaxReplicas = 64;      // --gpus
constexpr int64_t kMaxImages = 1000000000;  // --limit, bench --images
constexpr int64_t kMaxSteps = 1000000000;   // --log-every, --progress-every
constexpr int64_t kMaxSeed = 4294967295;    // seeds are 32-bit

// A whole number from min to max: "must be at least 1, got 0", "must be at most 100000, got
// 100001", "must be a whole number, got 2.5". Text that is no number at all passes, so that
// the conversion names the type ("--epochs takes INT, got 'many'").
CLI::Validator whole_number(int64_t min, int64_t max);

// Where a real number may lie; an open end excludes its value.
struct Interval {
  double min = -std::numeric_limits<double>::infinity();
  bool min_open = false;
  double max = std::numeric_limits<double>::infinity();
  bool max_open = false;
};
Interval at_least(double min);  // [min, inf)
Interval above(double min);     // (min, inf)

// A finite number in the interval, as the option's type T (float or double) holds it: "1e39"
// is inf as a float and "1e-50" is 0, so both are refused where the text alone would pass.
template <class T>
CLI::Validator real_number(Interval in);

// One of names; what names the kind: "unknown optimizer 'rmsprop' (known: sgd, adam)", or
// "unknown backend 'opnemp' (did you mean 'openmp'? known: ...)". also: more words after the
// list (", or a .json spec file").
CLI::Validator one_of(const std::vector<std::string>& names, const std::string& what,
                      const std::string& also = "");
// A backend this project knows (compiled in or not: "not compiled in" is a run-time error).
CLI::Validator backend_name();
// A built-in model, or a path ending in .json.
CLI::Validator model_name();
// Text that is not empty (a file name, a title).
CLI::Validator not_empty();

// train, eval: one backend, model, batch size (a list is refused: bench compares several).
CLI::Option* add_backend_option(CLI::App& app, std::string& backend);
CLI::Option* add_model_option(CLI::App& app, std::string& model);
CLI::Option* add_batch_option(CLI::App& app, int& batch, const std::string& help);
// bench: comma lists under the same names.
CLI::Option* add_backend_option(CLI::App& app, std::vector<std::string>& backends);
CLI::Option* add_model_option(CLI::App& app, std::vector<std::string>& models);
CLI::Option* add_batch_option(CLI::App& app, std::vector<int>& batches, const std::string& help);
// An option naming a file or folder: its value must not be empty.
CLI::Option* add_path_option(CLI::App& app, const std::string& names, std::string& path,
                             const std::string& help);
// --threads: one count (train, eval, backends) or a list (bench), 0 = all cores.
CLI::Option* add_threads_option(CLI::App& app, int& threads, const std::string& help);
CLI::Option* add_threads_option(CLI::App& app, std::vector<int>& threads, const std::string& help);
// --precision (train, bench, show): fp32, bf16 or fp16, as core/precision.hpp names them.
CLI::Option* add_precision_option(CLI::App& app, std::string& precision, const std::string& help);

}  // namespace pcnn::cli
