// Built from Layer::describe() and the shapes the layers report: nothing here knows a layer kind.
#include "apps/pcnn/model_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <vector>

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

// "model lenet5: 1x28x28 input, 10 classes, 61,706 parameters\n"
std::string header(const ModelSpec& spec, size_t params) {
  return "model " + spec.name + ": " + shape_text({spec.in_c, spec.in_h, spec.in_w}) + " input, " +
         std::to_string(spec.classes) + " classes, " + grouped(params) + " parameters\n";
}

// A count that may pass 2^64 in a batch's totals: grouped digits while exact enough, else 1.2e+21.
std::string grouped_count(double n) {
  if (n < 1e18) return grouped(size_t(n));
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", n);
  return text;
}

// "4.0 MiB", or "668.6 TiB": the largest unit that leaves at least 1.
std::string binary_size(double bytes) {
  const char* units[] = {"MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = bytes / (1 << 20);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) v /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
  return text;
}

// Spec layers first..last: "3", or "0-2" for a layer fused from three.
std::string span(size_t first, size_t last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

// Rows of cells, columns as wide as their widest cell; the first `left` columns flush left.
std::string table(const std::vector<std::vector<std::string>>& rows, size_t left) {
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += "  " + (c < left ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}
}  // namespace

std::string model_summary(const Model& model) {
  size_t width = std::string("layer").size();
  for (size_t i = 0; i < model.layer_count(); ++i)
    width = std::max(width, model.layer(i).describe().size());
  std::string text = header(model.spec(), model.param_count());
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

std::string model_details(const ModelSpec& spec, int batch, Precision precision) {
  std::vector<size_t> first;
  const ModelSpec fused = fuse(spec, &first);
  const auto layers = build_layers(fused);
  first.push_back(spec.layers.size());
  std::vector<std::vector<std::string>> rows = {
      {"index", "layer", "output", "parameters", "FLOPs/image", "activation bytes/image"}};
  size_t params = 0, bytes = 0;
  double forward = 0, backward = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = *layers[i];
    const size_t layer_bytes = layer_activation_bytes(l, precision);
    rows.push_back({span(first[i], first[i + 1] - 1), l.describe(), shape_text(l.output_shape()),
                    grouped(l.param_count()), grouped_count(l.forward_flops(1)),
                    grouped(layer_bytes)});
    params += l.param_count();
    bytes += layer_bytes;
    forward += l.forward_flops(1);
    backward += l.backward_flops(1);
  }
  // The buffers every layer shares: output gradients (two, used in turn) and one workspace.
  const ActivationBytes shared = activation_bytes(layers, precision);
  rows.push_back({"", "output gradients (2 buffers)", "", "", "", grouped(shared.gradients)});
  rows.push_back({"", "workspace (transient)", "", "", "", grouped(shared.workspace)});
  bytes += shared.gradients + shared.workspace;
  if (precision != Precision::F32) {  // the 16-bit input, fp32 logits, widened copies
    rows.push_back({"", "16-bit conversions (transient)", "", "", "", grouped(shared.conversion)});
    bytes += shared.conversion;
  }
  rows.push_back({"", "total", "", grouped(params), grouped_count(forward), grouped(bytes)});
  std::string text = header(fused, params) + table(rows, 3);
  text += "per image: " + grouped_count(forward) + " FLOPs forward, " +
          grouped_count(forward + backward) + " forward and backward; " + grouped(bytes) +
          " bytes of activations" +
          (precision == Precision::F32 ? std::string()
                                       : std::string(" (") + precision_name(precision) + ")") +
          "\n";
  if (batch > 0) {
    const double n = batch;
    text += "batch of " + std::to_string(batch) + ": " + grouped_count(n * forward) +
            " FLOPs forward, " + grouped_count(n * (forward + backward)) +
            " forward and backward\n";
    text += "batch of " + std::to_string(batch) + ": " + grouped_count(n * double(bytes)) +
            " bytes of activations (" + binary_size(n * double(bytes)) + "), " +
            grouped_count(2.0 * sizeof(float) * double(params)) +
            " bytes of parameters and their gradients\n";
  }
  return text;
}

std::string memory_line(const Backend& be, const ModelSpec& spec, int64_t device_in_use,
                        Precision precision) {
  const MemoryUsage m = be.memory_usage();
  std::string line = "memory: peak " + binary_size(double(m.peak)) + " allocated through " +
                     be.name() + " (" + grouped(m.peak) + " bytes)";
  if (device_in_use >= 0)
    line += ", " + binary_size(double(device_in_use)) + " in use on the device (its context too)";
  line += "; activations kept per image " +
          grouped(activation_bytes_per_image(spec, true, precision, be.stages_16bit())) +
          " bytes fused, " +
          grouped(activation_bytes_per_image(spec, false, precision, be.stages_16bit())) +
          " unfused";
  if (precision != Precision::F32) {
    // What 16 bits halve (the layer outputs and their gradients), and the transient fp32 copies
    // of one layer's tensors its fp32 pass works on (none where the backend's kernels read and
    // write 16 bits themselves).
    const auto layers = build_layers(fuse(spec));
    const ActivationBytes f32 = activation_bytes(layers),
                          b16 = activation_bytes(layers, precision, be.stages_16bit());
    line += std::string("; in ") + precision_name(precision) + " the layer outputs and gradients " +
            "take " + grouped(b16.outputs + b16.gradients) + " bytes (fp32: " +
            grouped(f32.outputs + f32.gradients) + "), conversions " + grouped(b16.conversion);
  }
  return line;
}

}  // namespace pcnn::cli
