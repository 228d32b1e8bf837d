// Validators return "" for a good value and the complaint otherwise; CLI11 puts the option's
// name in front ("--epochs: must be at least 1, got 0").
#include "apps/pcnn/options.hpp"

#include <charconv>

#include "apps/pcnn/suggest.hpp"
#include "backends/registry.hpp"
#include "models/model_spec.hpp"
#include "report/number_format.hpp"

namespace pcnn::cli {

namespace {
const char* kBackendNames = "--backend,--backends,-b";
const char* kModelNames = "--model,--models,-m";
const char* kBatchNames = "--batch-size,--batch-sizes";

bool parse_number(const std::string& text, double& v) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

CLI::Validator bound(double min, bool inclusive) {
  const std::string word = inclusive ? "at least " : "above ";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!parse_number(text, v)) return "";  // not a number: the conversion says so
        if (inclusive ? v >= min : v > min) return "";
        return "must be " + word + round_trip(min) + ", got " + text;
      },
      (inclusive ? ">=" : ">") + round_trip(min));
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

CLI::Validator at_least(double min) { return bound(min, true); }
CLI::Validator above(double min) { return bound(min, false); }

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

CLI::Option* add_model_option(CLI::App& app, std::string& model) {
  return app.add_option(kModelNames, model, "lenet5, simard2003, mlp, or a JSON spec file")
      ->check(single("model"))
      ->check(model_name())
      ->capture_default_str();
}

CLI::Option* add_batch_option(CLI::App& app, int& batch, const std::string& help) {
  return app.add_option(kBatchNames, batch, help)->check(at_least(1))->capture_default_str();
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
      ->check(at_least(1))
      ->capture_default_str();
}

}  // namespace pcnn::cli
