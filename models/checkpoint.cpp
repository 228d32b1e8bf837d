// Checkpoint <-> tensor file. Every number goes through JSON, whose doubles print with the digits
// needed to read back exactly (floats widen to doubles losslessly), so a decoded checkpoint
// equals the encoded one field for field; the decoder then checks that the fields fit together.
#include "models/checkpoint.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "core/precision.hpp"
#include "models/atomic_write.hpp"
#include "models/json_text.hpp"
#include "models/spec_check.hpp"
#include "models/tensor_file.hpp"
#include "models/whole_file.hpp"

namespace pcnn {

namespace {
using nlohmann::json;
const FileKind kCheckpointFile{"pcnn-checkpoint", "ParallelCNN checkpoint"};
constexpr uint64_t kMaxCheckpointFile = uint64_t(48) << 30;  // three arenas of a huge model

json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }
double number_or_nan(const json& v) { return v.is_null() ? NAN : v.get<double>(); }

// Only a run that augments writes the key: checkpoints of other runs stay as they were.
json augment_json(const AugmentConfig& a) {
  return {{"elastic", a.elastic}, {"affine", a.affine}, {"crop", a.crop}, {"flip", a.flip},
          {"elastic_alpha", a.elastic_alpha}, {"elastic_sigma", a.elastic_sigma},
          {"affine_rotate", a.affine_rotate}, {"affine_scale", a.affine_scale},
          {"affine_shear", a.affine_shear}, {"crop_pad", a.crop_pad},
          {"flip_probability", a.flip_probability}};
}

AugmentConfig augment_from_json(const json& j) {
  AugmentConfig a;
  a.elastic = j.at("elastic").get<bool>();
  a.affine = j.at("affine").get<bool>();
  a.crop = j.at("crop").get<bool>();
  a.flip = j.at("flip").get<bool>();
  a.elastic_alpha = j.at("elastic_alpha").get<float>();
  a.elastic_sigma = j.at("elastic_sigma").get<float>();
  a.affine_rotate = j.at("affine_rotate").get<float>();
  a.affine_scale = j.at("affine_scale").get<float>();
  a.affine_shear = j.at("affine_shear").get<float>();
  a.crop_pad = j.at("crop_pad").get<int>();
  a.flip_probability = j.at("flip_probability").get<float>();
  return a;
}

json run_json(const RunSettings& r) {
  json j = {{"spec", to_json(r.spec)},
            {"optimizer", r.optimizer},
            {"lr", r.lr},
            {"momentum", r.momentum},
            {"weight_decay", r.weight_decay},
            {"lr_decay", r.lr_decay},
            {"lr_schedule", r.lr_schedule},
            {"precision", r.precision},
            {"batch", r.batch},
            {"epochs", r.epochs},
            {"limit", r.limit},
            {"replicas", r.replicas},
            {"seed", r.seed},
            {"mean", r.norm.mean},
            {"inv_std", r.norm.inv_std},
            {"channel_mean", r.norm.channel_mean},
            {"channel_inv_std", r.norm.channel_inv_std},
            {"val_split", r.val_split},
            {"data_format", r.data_format}};
  if (r.augment.any()) j["augment"] = augment_json(r.augment);
  return j;
}

RunSettings run_from_json(const json& j) {
  RunSettings r;
  r.spec = model_spec_from_json(j.at("spec"));
  r.optimizer = j.at("optimizer").get<std::string>();
  r.lr = j.at("lr").get<float>();
  r.momentum = j.at("momentum").get<float>();
  r.weight_decay = j.at("weight_decay").get<float>();
  r.lr_decay = j.at("lr_decay").get<float>();
  // Added with the cosine schedule: older checkpoints decayed by lr_decay.
  r.lr_schedule = j.value("lr_schedule", std::string("exp"));
  // Added with 16-bit activations: older checkpoints trained in fp32.
  r.precision = j.value("precision", std::string("fp32"));
  r.batch = j.at("batch").get<int>();
  r.epochs = j.at("epochs").get<int>();
  r.limit = j.at("limit").get<int>();
  r.replicas = j.at("replicas").get<int>();
  r.seed = j.at("seed").get<uint32_t>();
  r.norm.mean = j.at("mean").get<float>();
  r.norm.inv_std = j.at("inv_std").get<float>();
  if (j.contains("augment")) r.augment = augment_from_json(j.at("augment"));
  // Added with multi-channel data: absent in older checkpoints (grey, no validation set).
  r.norm.channel_mean = j.value("channel_mean", std::vector<float>{});
  r.norm.channel_inv_std = j.value("channel_inv_std", std::vector<float>{});
  r.val_split = j.value("val_split", 0.0);
  r.data_format = j.value("data_format", std::string());
  return r;
}

json history_json(const std::vector<LogRow>& rows) {
  json a = json::array();
  for (const LogRow& r : rows)
    a.push_back({r.epoch, r.step, number_or_null(r.train_loss), number_or_null(r.train_accuracy),
                 number_or_null(r.test_loss), number_or_null(r.test_accuracy),
                 number_or_null(r.learning_rate), number_or_null(r.images_per_s),
                 number_or_null(r.elapsed_s), number_or_null(r.val_loss),
                 number_or_null(r.val_accuracy)});
  return a;
}

std::vector<LogRow> history_from_json(const json& a) {
  std::vector<LogRow> rows;
  for (const json& v : a) {
    // 9 values before validation sets existed, 11 since.
    PCNN_CHECK(v.is_array() && (v.size() == 9 || v.size() == 11),
               "a history row is not 9 or 11 values: " << brief(v));
    LogRow r;
    r.epoch = v[0].get<int>();
    r.step = v[1].get<int64_t>();
    r.train_loss = number_or_nan(v[2]);
    r.train_accuracy = number_or_nan(v[3]);
    r.test_loss = number_or_nan(v[4]);
    r.test_accuracy = number_or_nan(v[5]);
    r.learning_rate = number_or_nan(v[6]);
    r.images_per_s = number_or_nan(v[7]);
    r.elapsed_s = number_or_nan(v[8]);
    if (v.size() == 11) {
      r.val_loss = number_or_nan(v[9]);
      r.val_accuracy = number_or_nan(v[10]);
    }
    rows.push_back(r);
  }
  return rows;
}

json mark_json(const StepProgress& p) {
  return {p.epoch, p.step, p.steps, p.images, p.loss_sum, p.correct, p.seconds};
}

StepProgress mark_from_json(const json& v) {
  PCNN_CHECK(v.is_array() && v.size() == 7, "'log_mark' is not 7 values");
  StepProgress p;
  p.epoch = v[0].get<int>();
  p.step = v[1].get<int>();
  p.steps = v[2].get<int>();
  p.images = v[3].get<int64_t>();
  p.loss_sum = v[4].get<double>();
  p.correct = v[5].get<double>();
  p.seconds = v[6].get<double>();
  return p;
}

json parsed(const std::map<std::string, std::string>& meta, const std::string& key) {
  const auto it = meta.find(key);
  PCNN_CHECK(it != meta.end(), "no '" << key << "' in its metadata");
  json j = json::parse(it->second, nullptr, false);
  PCNN_CHECK(!j.is_discarded(), "its '" << key << "' is not valid JSON");
  return j;
}

// The tensor of that name, or throws; its size must be count.
const std::vector<float>& tensor(const TensorFile& f, const std::string& name, size_t count) {
  for (const NamedTensor& t : f.tensors)
    if (t.name == name) {
      PCNN_CHECK(t.data.size() == count, "tensor '" << name << "' has " << t.data.size()
                                                    << " values, the run needs " << count);
      return t.data;
    }
  throw Error("no tensor '" + name + "'");
}

void check_finite(const std::vector<float>& v, const std::string& name) {
  for (size_t i = 0; i < v.size(); ++i)
    PCNN_CHECK(std::isfinite(v[i]), "a NaN or Inf in tensor '" << name << "' (value " << i << ")");
}

// Everything decoded must fit together: a checkpoint that passes resumes without a later throw.
void check_consistent(const Checkpoint& c, size_t tensors) {
  const RunSettings& r = c.run;
  PCNN_CHECK(r.optimizer == "sgd" || r.optimizer == "adam", "unknown optimizer " << quoted(r.optimizer));
  PCNN_CHECK(r.lr_schedule == "exp" || r.lr_schedule == "cosine",
             "unknown learning-rate schedule " << quoted(r.lr_schedule));
  PCNN_CHECK(find_precision(r.precision), "unknown precision " << quoted(r.precision));
  PCNN_CHECK(r.lr > 0 && r.lr_decay > 0 && r.momentum >= 0 && r.momentum < 1 && r.weight_decay >= 0,
             "optimizer settings out of range");
  PCNN_CHECK(r.batch >= 1 && r.epochs >= 1 && r.limit >= 0 && r.replicas >= 1 && r.batch % r.replicas == 0,
             "batch " << r.batch << ", epochs " << r.epochs << ", limit " << r.limit << " or replicas "
                      << r.replicas << " out of range");
  PCNN_CHECK(std::isfinite(r.norm.mean) && std::isfinite(r.norm.inv_std) && r.norm.inv_std > 0,
             "a bad input normalisation");
  const AugmentConfig& a = r.augment;
  PCNN_CHECK(a.elastic_alpha >= 0 && a.elastic_alpha <= kMaxElasticAlpha &&
                 a.elastic_sigma > 0 && a.elastic_sigma <= kMaxElasticSigma &&
                 a.affine_rotate >= 0 && a.affine_rotate <= kMaxAffineRotate &&
                 a.affine_scale >= 0 && a.affine_scale <= kMaxAffineScale &&
                 a.affine_shear >= 0 && a.affine_shear <= kMaxAffineShear && a.crop_pad >= 0 &&
                 a.crop_pad <= kMaxCropPad && a.flip_probability >= 0 && a.flip_probability <= 1,
             "augmentation settings out of range");
  r.norm.check(r.spec.in_c, "its run");
  PCNN_CHECK(r.val_split >= 0 && r.val_split < 1, "'val_split' " << r.val_split << " is outside [0, 1)");
  PCNN_CHECK(c.steps_per_epoch >= 1, "'steps_per_epoch' must be at least 1");
  const int64_t total = int64_t(r.epochs) * c.steps_per_epoch;
  PCNN_CHECK(c.state.global_step >= 0 && c.state.global_step <= total,
             "step " << c.state.global_step << " is outside the run's " << total << " steps");
  int epoch_rows = 0;
  for (const LogRow& row : c.history) epoch_rows += row.is_epoch_row();
  PCNN_CHECK(epoch_rows == c.epoch(),  // an epoch's row is written before its last checkpoint
             "its history has " << epoch_rows << " epochs, its position " << c.epoch());
  PCNN_CHECK(std::isfinite(c.elapsed_s) && c.elapsed_s >= 0, "a bad 'elapsed_s'");
  PCNN_CHECK(c.checkpoint_every >= 0 && c.threads >= 0, "a bad 'checkpoint_every' or 'threads'");
  const bool state = check_spec(r.spec).state_count > 0;  // a "state" tensor (batchnorm)
  const size_t expected = (r.optimizer == "adam" ? 4 : 3) + (state ? 1 : 0);
  PCNN_CHECK(tensors == expected, "has " << tensors << " tensors, a checkpoint of " << r.optimizer
                                         << (state ? " with running statistics" : "") << " has "
                                         << expected);
}
}  // namespace

std::string encode_checkpoint(const Checkpoint& c) {
  TensorFile f;
  const auto flat = [](const char* name, const std::vector<float>& v) {
    return NamedTensor{name, {int64_t(v.size())}, v};
  };
  f.tensors.push_back(flat("params", c.state.params));
  f.tensors.push_back(flat("optimizer.moment1", c.state.moment1));
  if (c.run.optimizer == "adam") f.tensors.push_back(flat("optimizer.moment2", c.state.moment2));
  if (!c.state.state.empty()) f.tensors.push_back(flat("state", c.state.state));
  f.tensors.push_back({"metrics", {int64_t(c.run.replicas), int64_t(kMetricCount)}, c.state.metrics});
  f.metadata = provenance_metadata(c.data);
  f.metadata["run"] = run_json(c.run).dump();
  f.metadata["position"] = json{{"global_step", c.state.global_step},
                                {"steps_per_epoch", c.steps_per_epoch},
                                {"elapsed_s", c.elapsed_s},
                                {"checkpoint_every", c.checkpoint_every},
                                {"backend", c.backend}, {"threads", c.threads},
                                {"loss_scale", c.state.loss_scale}}.dump();
  f.metadata["history"] = history_json(c.history).dump();
  f.metadata["log_mark"] = mark_json(c.log_mark).dump();
  return encode_tensor_file(f, kCheckpointFile);
}

Checkpoint decode_checkpoint(const std::string& bytes, const std::string& name) {
  const TensorFile f = decode_tensor_file(bytes, kCheckpointFile, name);
  Checkpoint c;
  try {
    c.run = run_from_json(parsed(f.metadata, "run"));
    const json pos = parsed(f.metadata, "position");
    c.state.global_step = pos.at("global_step").get<int64_t>();
    c.steps_per_epoch = pos.at("steps_per_epoch").get<int>();
    c.elapsed_s = pos.at("elapsed_s").get<double>();
    c.checkpoint_every = pos.at("checkpoint_every").get<int>();
    c.backend = pos.at("backend").get<std::string>();
    c.threads = pos.at("threads").get<int>();
    // fp16 runs only: {scale, finite steps since it moved} (Optimizer::loss_scale_state)
    c.state.loss_scale = pos.value("loss_scale", std::vector<float>{});
    PCNN_CHECK(c.state.loss_scale.empty() ||
                   (c.state.loss_scale.size() == 2 && c.state.loss_scale[0] >= kMinLossScale &&
                    c.state.loss_scale[0] <= kMaxLossScale && c.state.loss_scale[1] >= 0 &&
                    c.state.loss_scale[1] < kLossScaleInterval),
               "a bad 'loss_scale'");
    PCNN_CHECK(c.state.loss_scale.empty() || c.run.precision == "fp16",
               "a 'loss_scale' in a run whose activations are " << c.run.precision);
    c.history = history_from_json(parsed(f.metadata, "history"));
    c.log_mark = mark_from_json(parsed(f.metadata, "log_mark"));
    c.data = provenance_from_metadata(f.metadata);
    check_consistent(c, f.tensors.size());
    const size_t n = check_spec(c.run.spec).param_count;
    c.state.params = tensor(f, "params", n);
    c.state.moment1 = tensor(f, "optimizer.moment1", n);
    if (c.run.optimizer == "adam") c.state.moment2 = tensor(f, "optimizer.moment2", n);
    const size_t state_n = check_spec(c.run.spec).state_count;
    if (state_n) c.state.state = tensor(f, "state", state_n);
    c.state.metrics = tensor(f, "metrics", size_t(c.run.replicas) * kMetricCount);
    check_finite(c.state.params, "params");
    check_finite(c.state.moment1, "optimizer.moment1");
    check_finite(c.state.moment2, "optimizer.moment2");
    check_finite(c.state.state, "state");
  } catch (const json::exception& e) {  // a value of the wrong type or a missing key
    throw Error("'" + name + "' has a bad header: " + std::string(e.what()).substr(0, 160));
  } catch (const Error& e) {
    throw Error("'" + name + "' has a bad header: " + e.what());
  }
  return c;
}

void save_checkpoint(const std::string& path, const Checkpoint& c) {
  write_file_atomically(path, encode_checkpoint(c));
}

Checkpoint load_checkpoint(const std::string& path) {
  return decode_checkpoint(read_whole_file(path, "checkpoint", kMaxCheckpointFile), path);
}

}  // namespace pcnn
