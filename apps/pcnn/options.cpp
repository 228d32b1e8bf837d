// Validators return "" for a good value and the complaint otherwise; CLI11 puts the option's
// name in front ("--epochs: must be at least 1, got 0").
#include "apps/pcnn/options.hpp"

#include <cctype>
#include <cmath>
#include <type_traits>

#include "apps/pcnn/suggest.hpp"
#include "backends/registry.hpp"
#include "core/precision.hpp"
#include "models/model_spec.hpp"
#include "report/number_format.hpp"

namespace pcnn::cli {

namespace {
const char* kBackendNames = "--backend,--backends,-b";
const char* kModelNames = "--model,--models,-m";
const char* kBatchNames = "--batch-size,--batch-sizes";

// "010" is octal 8 to CLI11 (strtoll with base 0): refused rather than read as a surprise.
bool octal_looking(const std::string& text) {
  const size_t digits = text.find_first_not_of("+-");
  return digits != std::string::npos && text.size() > digits + 1 && text[digits] == '0' &&
         std::isdigit(static_cast<unsigned char>(text[digits + 1]));
}

// "> 0", ">= 0", "[0, 1)": for the help.
std::string interval_text(const Interval& in) {
  if (std::isinf(in.max)) return (in.min_open ? ">" : ">=") + round_trip(in.min);
  return (in.min_open ? "(" : "[") + round_trip(in.min) + ", " + round_trip(in.max) +
         (in.max_open ? ")" : "]");
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// train and eval run one of each; a comma list is what bench takes.
CLI::Validator single(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        if (text.find(',') == std::string::npos) return "";
        return "takes one " + what + ", got '" + text + "' (pcnn bench compares several)";
      },
      "");
}
}  // namespace

CLI::Validator whole_number(int64_t min, int64_t max) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::string at_least = "must be at least " + std::to_string(min) + ", got " + text;
        const std::string at_most = "must be at most " + std::to_string(max) + ", got " + text;
        int64_t v = 0;
        if (!CLI::detail::lexical_cast(text, v)) {
          long double x = 0;
          if (!CLI::detail::lexical_cast(text, x)) return "";  // no number: the conversion says so
          if (x < min) return at_least;  // beyond int64 (the comparisons are false for nan)
          if (x > max) return at_most;
          return "must be a whole number, got " + text;
        }
        if (octal_looking(text))
          return "must be written without a leading 0 (it would be read as octal), got " + text;
        if (v < min) return at_least;
        if (v > max) return at_most;
        return "";
      },
      std::to_string(min) + ".." + std::to_string(max));
}

Interval at_least(double min) { return Interval{min, false}; }
Interval above(double min) { return Interval{min, true}; }

template <class T>
CLI::Validator real_number(Interval in) {
  static_assert(std::is_floating_point_v<T>);
  // The complaint about x, or "" when it lies in the interval.
  const auto complaint = [in](long double x, const std::string& text) -> std::string {
    if (!std::isfinite(x)) return "must be a finite number, got " + text;
    if (x < in.min || (in.min_open && x == in.min))
      return (in.min_open ? "must be above " : "must be at least ") + round_trip(in.min) +
             ", got " + text;
    if (x > in.max || (in.max_open && x == in.max))
      return (in.max_open ? "must be below " : "must be at most ") + round_trip(in.max) +
             ", got " + text;
    return "";
  };
  return CLI::Validator(
      [in, complaint](std::string& text) -> std::string {
        T v = 0;
        long double exact = 0;
        if (!CLI::detail::lexical_cast(text, v) || !CLI::detail::lexical_cast(text, exact))
          return "";  // no number: the conversion says so
        std::string why = complaint(v, text);
        // Right as written, wrong as stored (1e39 -> inf, 1e-50 -> 0, 0.999999999 -> 1).
        if (!why.empty() && complaint(exact, text).empty())
          why += " (" + round_trip(v) + (sizeof(T) == sizeof(float) ? " as a float)" : " as a double)");
        return why;
      },
      interval_text(in));
}
template CLI::Validator real_number<float>(Interval);
template CLI::Validator real_number<double>(Interval);

CLI::Validator not_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; },
      "");
}

CLI::Validator one_of(const std::vector<std::string>& names, const std::string& what,
                      const std::string& also) {
  return CLI::Validator(
      [names, what, also](std::string& text) -> std::string {
        for (const std::string& n : names)
          if (n == text) return "";
        const std::string guess = closest_match(text, names);
        return "unknown " + what + " '" + text + "' (" +
               (guess.empty() ? "" : "did you mean '" + guess + "'? ") + "known: " +
               joined(names) + also + ")";
      },
      "{" + joined(names) + "}");
}

CLI::Validator backend_name() { return one_of(known_backend_names(), "backend"); }

CLI::Validator model_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool json = text.size() > 5 && text.compare(text.size() - 5, 5, ".json") == 0;
        if (json) return "";  // a file: whether it is there is a run-time matter
        return one_of(builtin_model_names(), "model", ", or a .json spec file")(text);
      },
      "");
}

CLI::Option* add_backend_option(CLI::App& app, std::string& backend) {
  return app.add_option(kBackendNames, backend, "backend to train on (default: the fastest usable here)")
      ->check(single("backend"))
      ->check(backend_name());
}

CLI::Option* add_path_option(CLI::App& app, const std::string& names, std::string& path,
                             const std::string& help) {
  return app.add_option(names, path, help)->check(not_empty());
}

CLI::Option* add_model_option(CLI::App& app, std::string& model) {
  return app
      .add_option(kModelNames, model, "lenet5, simard2003, mlp, fast3x3, or a JSON spec file")
      ->check(single("model"))
      ->check(model_name())
      ->capture_default_str();
}

CLI::Option* add_batch_option(CLI::App& app, int& batch, const std::string& help) {
  return app.add_option(kBatchNames, batch, help)
      ->check(whole_number(1, kMaxBatch))
      ->capture_default_str();
}

CLI::Option* add_backend_option(CLI::App& app, std::vector<std::string>& backends) {
  return app.add_option(kBackendNames, backends,
                        "backends, comma-separated (default: every compiled-in one; one not "
                        "usable here is skipped with its reason)")
      ->delimiter(',')
      ->check(backend_name());
}

CLI::Option* add_model_option(CLI::App& app, std::vector<std::string>& models) {
  return app.add_option(kModelNames, models, "built-in models or JSON spec files, comma-separated")
      ->delimiter(',')
      ->check(model_name())
      ->capture_default_str();
}

CLI::Option* add_batch_option(CLI::App& app, std::vector<int>& batches, const std::string& help) {
  return app.add_option(kBatchNames, batches, help)
      ->delimiter(',')
      ->check(whole_number(1, kMaxBatch))
      ->capture_default_str();
}

CLI::Option* add_precision_option(CLI::App& app, std::string& precision, const std::string& help) {
  return app.add_option("--precision", precision, help)
      ->check(one_of(precision_names(), "precision"))
      ->capture_default_str();
}

CLI::Option* add_threads_option(CLI::App& app, int& threads, const std::string& help) {
  return app.add_option("--threads", threads, help)
      ->check(whole_number(0, kMaxThreads))
      ->capture_default_str();
}

CLI::Option* add_threads_option(CLI::App& app, std::vector<int>& threads, const std::string& help) {
  return app.add_option("--threads", threads, help)
      ->delimiter(',')
      ->check(whole_number(0, kMaxThreads))
      ->capture_default_str();
}

}  // namespace pcnn::cli
