// pcnn show MODEL: a model's layers (as built, after fusion), output shapes, parameters, FLOPs
// and activation memory per image, read from a built-in name, a JSON spec or a saved model file,
// without a backend and without data.
#include <cstdio>
#include <sys/stat.h>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/model_summary.hpp"
#include "apps/pcnn/options.hpp"
#include "models/model_spec.hpp"
#include "models/serialize.hpp"

namespace pcnn::cli {

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool is_builtin(const std::string& name) {
  for (const auto& n : builtin_model_names())
    if (n == name) return true;
  return false;
}

bool is_spec_file(const std::string& model) { return ends_with(model, ".json"); }

// Anything but a built-in name or a .json path is read as a model file: a name that is none of
// these and no file either is a usage error, with the closest built-in name.
bool names_model_file(const std::string& model) {
  struct stat st;
  return ends_with(model, ".pcnn") || stat(model.c_str(), &st) == 0;
}

CLI::Validator model_argument() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (is_builtin(text) || is_spec_file(text) || names_model_file(text)) return "";
        return one_of(builtin_model_names(), "model",
                      ", a .json spec file, or a model file written by pcnn train --save")(text);
      },
      "");
}

// The spec MODEL names; a file's errors name the file, and a spec's the layer index and key.
ModelSpec spec_of(const std::string& model) {
  if (is_builtin(model) || is_spec_file(model)) return load_model_spec(model);
  return load_model(model).spec;
}
}  // namespace

Command add_show_command(CLI::App& app) {
  struct Options {
    std::string model;
    int batch = 0;
    std::string precision = "fp32";
  };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "show", "Print a model's layers, output shapes, parameters, FLOPs and activation memory");
  sub->add_option(
         "model", o->model,
         "lenet5, simard2003, mlp, fast3x3, a JSON spec file (docs/model-format.md) or a model "
         "file written by pcnn train --save")
      ->required()
      ->check(not_empty())
      ->check(model_argument());
  add_batch_option(*sub, o->batch, "also print the totals for a batch of N images")
      ->default_str("");
  add_precision_option(*sub, o->precision,
                       "count the activations as stored in fp32, bf16 or fp16 (as pcnn train)");
  return {sub, [o] {
            std::printf("%s", model_details(spec_of(o->model), o->batch,
                                             *find_precision(o->precision))
                                  .c_str());
            return kExitSuccess;
          }};
}

}  // namespace pcnn::cli
