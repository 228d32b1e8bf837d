// Model <-> tensor file: which tensors a spec has (from check_spec's geometry), and every check
// that a file's contents fit together (spec, tensor names and shapes, values, normalisation).
#include "models/serialize.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/checked_math.hpp"
#include "models/atomic_write.hpp"
#include "models/json_text.hpp"
#include "models/spec_check.hpp"
#include "models/tensor_file.hpp"
#include "models/whole_file.hpp"

namespace pcnn {

namespace {
const FileKind kModelFile{"pcnn-model", "ParallelCNN model file"};
const std::string kFormat1Magic = "PCNNMODEL1\n";
// Far above any model this library can build (each tensor < 2^31 floats); refused unread.
constexpr uint64_t kMaxModelFile = uint64_t(16) << 30;

// The spec's parameter tensors, empty, in arena order; with `state`, its state tensors instead
// ("layers.<i>.running_mean" and ".running_var", PyTorch's names).
std::vector<NamedTensor> tensors_of(const ModelSpec& spec, bool state = false) {
  const SpecGeometry geo = check_spec(spec);
  std::vector<NamedTensor> tensors;
  for (size_t i = 0; i < geo.layers.size(); ++i) {
    const auto& shapes = state ? geo.layers[i].state : geo.layers[i].params;
    const char* first = state ? ".running_mean" : ".weight";
    const char* second = state ? ".running_var" : ".bias";
    for (size_t k = 0; k < shapes.size(); ++k)
      tensors.push_back({"layers." + std::to_string(i) + (k == 0 ? first : second), shapes[k], {}});
  }
  return tensors;
}

// Cuts `values` into the tensors' shapes, in order; `what` names them in the error.
void fill_tensors(std::vector<NamedTensor>& tensors, const std::vector<float>& values,
                  const char* what) {
  size_t needed = 0;
  for (const NamedTensor& t : tensors) needed += size_t(*checked_product(t.shape));
  PCNN_CHECK(values.size() == needed,
             "the model has " << values.size() << " " << what << ", its spec needs " << needed);
  auto from = values.begin();
  for (NamedTensor& t : tensors) {
    const auto to = from + std::ptrdiff_t(*checked_product(t.shape));
    t.data.assign(from, to);
    from = to;
  }
}

// An optional metadata entry holding a JSON array of T (absent: empty).
template <class T>
std::vector<T> json_list(const std::map<std::string, std::string>& meta, const std::string& key) {
  const auto it = meta.find(key);
  if (it == meta.end()) return {};
  const auto j = nlohmann::json::parse(it->second, nullptr, false);
  PCNN_CHECK(j.is_array(), "its '" << key << "' is not a JSON array");
  std::vector<T> out;
  for (const auto& v : j) {
    if constexpr (std::is_same_v<T, std::string>)
      PCNN_CHECK(v.is_string(), "its '" << key << "' holds a value that is not a string");
    else
      PCNN_CHECK(v.is_number(), "its '" << key << "' holds a value that is not a number");
    out.push_back(v.get<T>());
  }
  return out;
}

std::string shape_text(const std::vector<int64_t>& shape) { return nlohmann::json(shape).dump(); }
}  // namespace

std::string encode_model(const SavedModel& m) {
  TensorFile f;
  f.tensors = tensors_of(m.spec);
  fill_tensors(f.tensors, m.params, "parameters");
  std::vector<NamedTensor> state = tensors_of(m.spec, true);
  fill_tensors(state, m.state, "state values");
  f.tensors.insert(f.tensors.end(), state.begin(), state.end());
  f.metadata = provenance_metadata(m.provenance);
  f.metadata["spec"] = to_json(m.spec).dump();
  f.metadata["mean"] = metadata_number(m.mean);
  f.metadata["inv_std"] = metadata_number(m.inv_std);
  if (!m.channel_mean.empty()) {
    f.metadata["channel_mean"] = nlohmann::json(m.channel_mean).dump();
    f.metadata["channel_inv_std"] = nlohmann::json(m.channel_inv_std).dump();
  }
  if (!m.class_names.empty()) f.metadata["class_names"] = nlohmann::json(m.class_names).dump();
  return encode_tensor_file(f, kModelFile);
}

SavedModel decode_model(const std::string& bytes, const std::string& name) {
  const std::string at = "'" + name + "'";
  PCNN_CHECK(bytes.compare(0, kFormat1Magic.size(), kFormat1Magic) != 0,
             at << " is a format-1 ParallelCNN model file (pcnn 0.1, without a checksum); this pcnn "
                << "reads formats " << kOldestTensorFileVersion << " to " << kTensorFileVersion
                << " only: train and save the model again");
  const TensorFile f = decode_tensor_file(bytes, kModelFile, name);
  SavedModel m;
  try {
    const auto spec = f.metadata.find("spec");
    PCNN_CHECK(spec != f.metadata.end(), "no 'spec' in its metadata");
    const auto j = nlohmann::json::parse(spec->second, nullptr, false);
    PCNN_CHECK(!j.is_discarded(), "its 'spec' is not valid JSON");
    m.spec = model_spec_from_json(j);
    m.mean = metadata_value<float>(f.metadata, "mean", NAN);
    m.inv_std = metadata_value<float>(f.metadata, "inv_std", NAN);
    m.channel_mean = json_list<float>(f.metadata, "channel_mean");
    m.channel_inv_std = json_list<float>(f.metadata, "channel_inv_std");
    m.class_names = json_list<std::string>(f.metadata, "class_names");
    m.provenance = provenance_from_metadata(f.metadata);
    const auto version = f.metadata.find("pcnn_version");
    m.written_by = version == f.metadata.end() ? "unknown" : version->second;
  } catch (const Error& e) {
    throw Error(at + " has a bad header: " + e.what());
  }
  PCNN_CHECK(std::isfinite(m.mean), at << " has no input mean ('mean')");
  PCNN_CHECK(std::isfinite(m.inv_std) && m.inv_std > 0,
             at << " has 'inv_std' " << m.inv_std << ": the input scale must be a positive number");
  m.normalization().check(m.spec.in_c, at);
  PCNN_CHECK(m.class_names.empty() || int(m.class_names.size()) == m.spec.classes,
             at << " names " << m.class_names.size() << " classes, its spec has "
                << m.spec.classes);

  std::map<std::string, const NamedTensor*> by_name;
  for (const NamedTensor& t : f.tensors) by_name[t.name] = &t;
  std::vector<NamedTensor> expected = tensors_of(m.spec);
  const size_t param_tensors = expected.size();
  for (NamedTensor& t : tensors_of(m.spec, true)) expected.push_back(std::move(t));
  for (size_t k = 0; k < expected.size(); ++k) {
    const NamedTensor& e = expected[k];
    const auto it = by_name.find(e.name);
    PCNN_CHECK(it != by_name.end(), at << " has no tensor '" << e.name << "', which its spec needs");
    const NamedTensor& t = *it->second;
    PCNN_CHECK(t.shape == e.shape, at << " has tensor '" << e.name << "' of shape " << shape_text(t.shape)
                                      << ", its spec needs " << shape_text(e.shape));
    for (size_t i = 0; i < t.data.size(); ++i)
      PCNN_CHECK(std::isfinite(t.data[i]), at << " has a NaN or Inf in tensor '" << e.name << "' (value " << i << ")");
    std::vector<float>& into = k < param_tensors ? m.params : m.state;
    into.insert(into.end(), t.data.begin(), t.data.end());
    by_name.erase(it);
  }
  PCNN_CHECK(by_name.empty(), at << " has tensor " << quoted(by_name.begin()->first) << ", which its spec does not have");
  return m;
}

void save_model(const std::string& path, const SavedModel& m) {
  write_file_atomically(path, encode_model(m));
}

SavedModel load_model(const std::string& path) {
  return decode_model(read_whole_file(path, "model file", kMaxModelFile), path);
}

}  // namespace pcnn
