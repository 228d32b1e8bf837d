// Built from Layer::describe() and the shapes the layers report: nothing here knows a layer kind.
#include "apps/pcnn/model_summary.hpp"

#include <algorithm>
#include <cstdio>

namespace pcnn::cli {

namespace {
std::string shape_text(const FeatureShape& s) {
  if (s.h == 1 && s.w == 1) return std::to_string(s.c);
  return std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
}

// 61706 -> "61,706".
std::string grouped(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}
}  // namespace

std::string model_summary(const Model& model) {
  size_t width = std::string("layer").size();
  for (size_t i = 0; i < model.layer_count(); ++i)
    width = std::max(width, model.layer(i).describe().size());
  std::string text = "model " + model.spec().name + ": " + shape_text(model.input_shape()) +
                     " input, " + std::to_string(model.classes()) + " classes, " +
                     grouped(model.param_count()) + " parameters\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-*s  %-10s %10s\n", int(width), "layer", "output",
                "parameters");
  text += line;
  for (size_t i = 0; i < model.layer_count(); ++i) {
    const Layer& l = model.layer(i);
    std::snprintf(line, sizeof line, "  %-*s  %-10s %10s\n", int(width), l.describe().c_str(),
                  shape_text(l.output_shape()).c_str(), grouped(l.param_count()).c_str());
    text += line;
  }
  return text;
}

}  // namespace pcnn::cli
