// Saved models: the spec, the input normalisation, the parameters as named tensors
// ("layers.<i>.weight" / "layers.<i>.bias", i the layer's index in the unfused spec), the
// non-trained state ("layers.<i>.running_mean" / "layers.<i>.running_var" of batchnorm layers)
// and the provenance, in the safetensors container of models/tensor_file.hpp (format
// "pcnn-model", version 3; version-2 files, written before models had state, are read too). Written atomically (models/atomic_write.hpp). Format-1 files ("PCNNMODEL1", pcnn
// 0.1, no checksum) are refused with a message saying so, not read.
#pragma once

#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "models/provenance.hpp"

namespace pcnn {

struct SavedModel {
  ModelSpec spec;          // unfused spec
  float mean = 0.f, inv_std = 1.f;
  // Per input channel (metadata "channel_mean", "channel_inv_std"; written only for several
  // channels, so a grey model's file is what it always was and older files load as grey).
  std::vector<float> channel_mean, channel_inv_std;
  // The data set's class names, label order (metadata "class_names"; empty: unknown).
  std::vector<std::string> class_names;
  std::vector<float> params;
  std::vector<float> state;  // non-trained state (Model::get_state): batchnorm running statistics
  Provenance provenance;   // optional: its defaults read as "unknown"
  std::string written_by;  // set by loading: the pcnn version that wrote the file (saving
                           // always records the running version)
  Normalization normalization() const { return {mean, inv_std, channel_mean, channel_inv_std}; }
  void set_normalization(const Normalization& n) {
    mean = n.mean;
    inv_std = n.inv_std;
    channel_mean = n.channel_mean;
    channel_inv_std = n.channel_inv_std;
  }
};

void save_model(const std::string& path, const SavedModel& m);
// Throws Error naming the file and what is wrong: missing, foreign, old format, truncated,
// checksum, a bad spec, tensors that do not match the spec, non-finite values.
SavedModel load_model(const std::string& path);

// The bytes save_model writes and load_model reads (name: the file, for messages).
std::string encode_model(const SavedModel& m);
SavedModel decode_model(const std::string& bytes, const std::string& name);

}  // namespace pcnn
