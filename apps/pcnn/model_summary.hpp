// The model summary pcnn train prints before training: each layer as built (after fusion), its
// output shape per image and its parameter count, and the totals; and pcnn show's longer form.
#pragma once

#include <string>

#include "models/model.hpp"

namespace pcnn::cli {

// Lines ending in '\n'.
std::string model_summary(const Model& model);

// pcnn show's table, built without a backend: the summary's rows, each with the spec layers it
// was fused from ("0-2"), its forward FLOPs and activation bytes per image (its output and what
// it keeps: layer_activation_bytes), the buffers all layers share (activation_bytes), and totals;
// with batch > 0, the totals for a batch of that many.
std::string model_details(const ModelSpec& spec, int batch, Precision precision = Precision::F32);

// The memory line of pcnn train's summary: the backend's peak allocation (and, on a GPU, what the
// whole device has in use, device_in_use >= 0), and the activation bytes kept per image by the
// fused model and by the spec's layers unfused.
std::string memory_line(const Backend& be, const ModelSpec& spec, int64_t device_in_use,
                        Precision precision = Precision::F32);

}  // namespace pcnn::cli
