// Saved models: one file holding the spec (JSON), the input normalisation and the parameters.
// Written to a temporary file and renamed, so a model file is never left half-written.
#pragma once

#include <string>
#include <vector>

#include "models/model_spec.hpp"

namespace pcnn {

struct SavedModel {
  ModelSpec spec;          // unfused spec
  float mean = 0.f, inv_std = 1.f;
  std::vector<float> params;
};

void save_model(const std::string& path, const SavedModel& m);
// Throws Error for a missing, foreign, truncated or inconsistent file.
SavedModel load_model(const std::string& path);

}  // namespace pcnn
