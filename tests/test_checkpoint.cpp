// Checkpoints: the file's round trip (every field, bit for bit), a one-line refusal of corrupt,
// cut, foreign and inconsistent files, and, on the backend under test, a run stopped and
// restored anywhere ending with the weights of a run never stopped.
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "models/checkpoint.hpp"
#include "models/model.hpp"
#include "models/serialize.hpp"
#include "models/spec_check.hpp"
#include "models/tensor_file.hpp"
#include "tests/harness.hpp"
#include "tests/hostile_files.hpp"
#include "tests/synthetic.hpp"

namespace pcnn::test {

namespace {
ModelSpec tiny_spec() {
  return model_spec_from_json(nlohmann::json::parse(R"({"name": "tiny", "input": [1, 5, 5],
      "classes": 2, "layers": [{"type": "conv", "units": 2, "kernel": 3}, {"type": "tanh"},
      {"type": "flatten"}, {"type": "dense", "units": 2}]})"));
}

// Values whose every bit matters: no two alike, none short in decimal.
std::vector<float> values(size_t n, float seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::nextafter(seed * float(i + 1) / 7.f, 1e9f);
  return v;
}

Checkpoint full_checkpoint(const std::string& optimizer) {
  Checkpoint c;
  RunSettings& r = c.run;
  r.spec = tiny_spec();
  r.optimizer = optimizer;
  r.lr = 0.0021f;
  r.momentum = 0.85f;
  r.weight_decay = 3e-5f;
  r.lr_decay = 0.7f;
  r.lr_schedule = "cosine";
  r.batch = 6;
  r.epochs = 5;
  r.limit = 600;
  r.replicas = 2;
  r.seed = 4000000001u;
  r.norm = {0.2861f, 1.f / 0.353f};
  r.augment.elastic = r.augment.crop = true;
  r.augment.elastic_alpha = 12.5f;
  r.augment.elastic_sigma = 3.25f;
  r.augment.crop_pad = 3;
  c.data.data_folder = "/data/fashion";
  c.data.data_files = {"a.gz", "b.gz", "c", "d"};
  c.data.train_count = 600;
  c.data.test_count = 600;
  c.data.train_labels_crc32 = "0000abcd";
  c.data.test_labels_crc32 = "ffff0000";
  c.steps_per_epoch = 100;
  c.state.global_step = 237;  // epoch 3, step 37
  const size_t n = check_spec(r.spec).param_count;
  c.state.params = values(n, 1.1f);
  c.state.moment1 = values(n, -0.3f);
  if (optimizer == "adam") c.state.moment2 = values(n, 1e-7f);
  c.state.metrics = values(2 * kMetricCount, 3.5f);  // two replicas' sums and fault records
  for (int e = 1; e <= 2; ++e) {
    LogRow step;
    step.epoch = e;
    step.step = (e - 1) * 100 + 50;
    step.train_loss = 0.1 * e + 1e-17;
    step.train_accuracy = 0.3;
    step.learning_rate = 0.0021 * e;
    step.images_per_s = 1234.5;
    step.elapsed_s = 0.25 * e;  // test figures left NaN, as on step rows
    c.history.push_back(step);
    LogRow row = step;
    row.step = 0;
    row.test_loss = 0.45 / e;
    row.test_accuracy = 0.8 + 0.01 * e;
    c.history.push_back(row);
  }
  c.log_mark = {3, 25, 100, 150, 3.25, 7, -0.75, {}, {}};
  c.elapsed_s = 9.125;
  c.checkpoint_every = 25;
  c.backend = "openmp";
  c.threads = 3;
  return c;
}

void check_same_row(const LogRow& a, const LogRow& b) {
  check_same_fields("log row", a, b, &LogRow::epoch, &LogRow::step);
  for (auto field : {&LogRow::train_loss, &LogRow::train_accuracy, &LogRow::test_loss,
                     &LogRow::test_accuracy, &LogRow::learning_rate, &LogRow::images_per_s,
                     &LogRow::elapsed_s})
    CHECK(std::memcmp(&(a.*field), &(b.*field), sizeof(double)) == 0);  // NaN as NaN
}

void check_same(const Checkpoint& a, const Checkpoint& b) {
  CHECK(to_json(a.run.spec) == to_json(b.run.spec));
  using R = RunSettings;
  check_same_fields("run", a.run, b.run, &R::optimizer, &R::lr, &R::momentum, &R::weight_decay,
                    &R::lr_decay, &R::lr_schedule, &R::batch, &R::epochs, &R::limit, &R::replicas,
                    &R::seed, &R::augment);
  check_same_fields("norm", a.run.norm, b.run.norm, &Normalization::mean, &Normalization::inv_std);
  check_same_fields("checkpoint", a, b, &Checkpoint::data, &Checkpoint::steps_per_epoch,
                    &Checkpoint::elapsed_s, &Checkpoint::checkpoint_every, &Checkpoint::backend,
                    &Checkpoint::threads);
  using S = TrainingState;
  check_same_fields("state", a.state, b.state, &S::global_step, &S::params, &S::moment1,
                    &S::moment2, &S::metrics);
  REQUIRE(a.history.size() == b.history.size());
  for (size_t i = 0; i < a.history.size(); ++i) check_same_row(a.history[i], b.history[i]);
  using P = StepProgress;
  check_same_fields("log mark", a.log_mark, b.log_mark, &P::epoch, &P::step, &P::steps,
                    &P::images, &P::loss_sum, &P::correct, &P::seconds);
}

// A copy of bytes with one metadata value edited (from -> to) and the crc32 made right
// again, so that the edit is judged on its own.
std::string with_field(const std::string& bytes, const std::string& from, const std::string& to) {
  TensorFile f = decode_tensor_file(bytes, {"pcnn-checkpoint", "checkpoint"}, "x");
  f.metadata.erase("pcnn_version");
  int edits = 0;
  for (auto& [key, value] : f.metadata) {
    const size_t k = value.find(from);
    if (k != std::string::npos) value.replace(k, from.size(), to), ++edits;
  }
  REQUIRE(edits == 1);
  return encode_tensor_file(f, {"pcnn-checkpoint", "checkpoint"});
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("checkpoints: every field round-trips bit for bit, sgd and adam, through a file") {
  for (const std::string opt : {"adam", "sgd"}) {
    CAPTURE(opt);
    const Checkpoint c = full_checkpoint(opt);
    check_same(decode_checkpoint(encode_checkpoint(c), "x"), c);
    const std::string path = scratch_path("round_trip.ckpt");
    save_checkpoint(path, c);
    check_same(load_checkpoint(path), c);
    CHECK(read_bytes(path) == encode_checkpoint(c));  // equal contents, identical bytes
    std::remove(path.c_str());
  }
  const Checkpoint c = full_checkpoint("adam");
  CHECK(c.epoch() == 2);
  CHECK(c.step_in_epoch() == 37);
}

TEST_CASE("checkpoints: a model with batchnorm keeps its running statistics ('state')") {
  Checkpoint c = full_checkpoint("sgd");
  c.run.spec = model_spec_from_json(nlohmann::json::parse(R"({"name": "bn", "input": [1, 5, 5],
      "classes": 2, "layers": [{"type": "conv", "units": 2, "kernel": 3}, {"type": "batchnorm"},
      {"type": "flatten"}, {"type": "dense", "units": 2}]})"));
  const size_t n = check_spec(c.run.spec).param_count;
  c.state.params = values(n, 1.1f);
  c.state.moment1 = values(n, -0.3f);
  c.state.state = values(4, 0.7f);
  const Checkpoint back = decode_checkpoint(encode_checkpoint(c), "bn.ckpt");
  check_same(back, c);
  CHECK(back.state.state == c.state.state);
  // Without it (a checkpoint cut short of its state) the file is refused, not resumed wrongly.
  c.state.state.clear();
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(encode_checkpoint(c), "bn.ckpt"); },
                     "'bn.ckpt' has a bad header: has 3 tensors, a checkpoint of sgd with running statistics has 4");
  // And a model without state writes none.
  CHECK(full_checkpoint("sgd").state.state.empty());
  CHECK(decode_checkpoint(encode_checkpoint(full_checkpoint("sgd")), "x").state.state.empty());
}

TEST_CASE("checkpoints: corrupt, cut, foreign and inconsistent files are refused with one line") {
  const std::string good = encode_checkpoint(full_checkpoint("adam"));
  for (size_t len = 0; len < good.size(); len += 1 + len / 16)
    PCNN_CHECK_REFUSED([&] { decode_checkpoint(good.substr(0, len), "cut.ckpt"); }, "'cut.ckpt'");
  for (size_t at = 0; at < good.size(); at += 1 + at / 32) {
    std::string bad = good;
    bad[at] = char(bad[at] ^ 0x10);
    PCNN_CHECK_REFUSED([&] { decode_checkpoint(bad, "flip.ckpt"); }, "'flip.ckpt'");
  }
  std::string flipped = good;
  flipped[good.size() - 3] = char(flipped[good.size() - 3] ^ 1);
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(flipped, "f"); }, "checksum mismatch");
  PCNN_CHECK_REFUSED([&] { load_checkpoint(scratch_path("absent.ckpt")); }, "cannot open checkpoint");

  SavedModel m;
  m.spec = tiny_spec();
  m.params = initial_params(m.spec, 3);
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(encode_model(m), "model.pcnn"); },
                     "is not a ParallelCNN checkpoint", "pcnn-model");

  // Well-formed files whose fields do not fit together.
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(with_field(good, "\"global_step\":237", "\"global_step\":537"), "f"); },
                     "step 537 is outside the run's 500 steps");
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(with_field(good, "\"global_step\":237", "\"global_step\":137"), "f"); },
                     "history has 2 epochs, its position 1");
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(with_field(good, "\"optimizer\":\"adam\"", "\"optimizer\":\"sgd\""), "f"); },
                     "has 4 tensors, a checkpoint of sgd has 3");
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(with_field(good, "\"replicas\":2", "\"replicas\":4"), "f"); },
                     "replicas 4 out of range");  // batch 6 does not split over 4
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(with_field(good, "\"replicas\":2", "\"replicas\":3"), "f"); },
                     "tensor 'metrics' has " + std::to_string(2 * kMetricCount) +
                         " values, the run needs " + std::to_string(3 * kMetricCount));
  Checkpoint short_params = full_checkpoint("adam");
  short_params.state.params.pop_back();
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(encode_checkpoint(short_params), "f"); },
                     "tensor 'params' has 57 values, the run needs 58");
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(with_field(good, "\"crop_pad\":3", "\"crop_pad\":65"), "f"); },
                     "augmentation settings out of range");
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(with_field(good, "\"lr\":", "\"rate\":"), "f"); },
                     "has a bad header", "lr");
  PCNN_CHECK_REFUSED([&] { decode_checkpoint(with_field(good, "\"seed\":4000000001", "\"seed\":\"x\""), "f"); },
                     "has a bad header");
}

}  // TEST_SUITE

namespace {
// A small Adam run on the backend under test: 3 epochs of 7 steps, stopped after stop_at steps
// (0: never) and resumed in a new trainer from the state taken then.
std::vector<float> run_with_stop(int stop_at, const AugmentConfig& augment = {}) {
  const Dataset data = synthetic_dataset(7 * 8 + 5, 28, 28, 31);  // a partial batch is dropped
  const ModelSpec spec = builtin_model("lenet5");
  TrainConfig cfg = adam_config(8, 9, 2e-3f);
  cfg.optimizer.weight_decay = 1e-4f;
  cfg.lr_decay = 0.5f;
  cfg.augment = augment;
  Model m(backend(), spec, 8, 6);
  auto trainer = std::make_unique<Trainer>(backend(), m, data, kSyntheticNorm, cfg);
  trainer->on_step([&](int, int) { return trainer->global_step() != stop_at; });
  for (int e = 0; e < 3 && (stop_at == 0 || trainer->global_step() != stop_at); ++e)
    trainer->train_epoch(e);
  if (stop_at == 0) return m.get_params();
  const TrainingState saved = trainer->state();
  CHECK(saved.global_step == stop_at);
  Model m2(backend(), spec, 8, 77);  // other initial weights: all must come from the state
  Trainer resumed(backend(), m2, data, kSyntheticNorm, cfg);
  resumed.restore(saved);
  for (int e = int(saved.global_step / resumed.steps_per_epoch()); e < 3; ++e) resumed.train_epoch(e);
  return m2.get_params();
}
}  // namespace

TEST_SUITE("backend") {

TEST_CASE("a run stopped anywhere and restored from its state ends with the same weights") {
  const std::vector<float> want = run_with_stop(0);
  const BackendEntry* entry = find_backend(backend_name());
  const bool bitwise = entry && entry->bitwise_repeatable;
  for (int stop_at : {1, 3, 7, 8, 13, 20}) {  // early, mid-epoch, at epoch ends, last step but one
    CAPTURE(stop_at);
    const std::vector<float> got = run_with_stop(stop_at);
    if (bitwise)
      CHECK(got == want);
    else
      check_close("resumed after step " + std::to_string(stop_at), got, want, 1e-4);
  }
}

TEST_CASE("a run with augmentation stopped and restored ends with the same weights") {
  // The augmentation is drawn from the step counter: the restored run draws what it would have.
  AugmentConfig a;
  a.elastic = a.affine = a.crop = a.flip = true;
  const std::vector<float> want = run_with_stop(0, a);
  CHECK(want != run_with_stop(0));
  const BackendEntry* entry = find_backend(backend_name());
  for (int stop_at : {3, 8}) {
    CAPTURE(stop_at);
    const std::vector<float> got = run_with_stop(stop_at, a);
    if (entry && entry->bitwise_repeatable)
      CHECK(got == want);
    else
      check_close("resumed after step " + std::to_string(stop_at), got, want, 1e-4);
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
