// pcnn::api::Network: a Model on its Backend plus the input normalisation, wrapping the Trainer,
// evaluate() and saved models. What the wrapped classes lack for a library user (growing the
// batch capacity, probabilities on the host) is added here rather than in them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "api/pcnn.hpp"
#include "backends/device_array.hpp"
#include "backends/registry.hpp"
#include "core/checked_math.hpp"
#include "models/model.hpp"
#include "models/serialize.hpp"
#include "models/spec_check.hpp"
#include "train/replica.hpp"

namespace pcnn::api {

struct Network::State {
  std::unique_ptr<Backend> backend;  // declared before model: destroyed after it
  ModelSpec spec;                    // unfused, as saved
  uint64_t seed = 1;
  std::unique_ptr<Model> model;
  Normalization norm;
  bool normalized = false;  // norm taken from a training set or a saved model
  Provenance provenance;    // what the last train() call did, for save()
  std::vector<std::string> class_names;  // from the training set or the saved model
};

namespace {

// The batch a network is first built for: evaluation and prediction run in batches this large,
// unless one image's largest layer makes 256 of them pass the backends' int indexing.
int default_capacity(const ModelSpec& spec) {
  const int64_t largest = std::max<int64_t>(1, check_spec(fuse(spec)).largest);
  return int(std::clamp<int64_t>(int64_t(kMaxElements) / largest, 1, 256));
}

std::unique_ptr<Backend> open(const std::string& name, int threads) {
  PCNN_CHECK(threads >= 0, "threads must be 0 (all cores) or more, got " << threads);
  BackendOptions opts;
  opts.threads = threads;
  return make_backend(name.empty() ? fastest_usable_backend(opts) : name, opts);
}

// count images of channels x height x width pixels as a data set, labelled 0 so that the gather
// kernels have labels to read (predict does not use them).
Dataset unlabelled(const uint8_t* images, int count, int channels, int height, int width) {
  PCNN_CHECK(images != nullptr, "predict: no images given");
  PCNN_CHECK(count >= 1 && channels >= 1 && height >= 1 && width >= 1,
             "predict: " << count << " images of " << channels << "x" << height << "x" << width
                         << " (each must be at least 1)");
  Dataset d;
  d.count = count;
  d.channels = channels;
  d.height = height;
  d.width = width;
  d.images.assign(images, images + size_t(count) * d.image_size());
  d.labels.assign(size_t(count), 0);
  return d;
}

std::string recipe(const TrainOptions& o) {
  std::ostringstream s;
  s << "pcnn::api::Network::train: " << o.optimizer << " lr " << o.learning_rate;
  if (o.cosine_schedule)
    s << " cosine schedule";
  else
    s << " decay " << o.lr_decay;
  s << ", batch " << o.batch << ", seed " << o.seed;
  return s.str();
}

}  // namespace

Network::Network(std::unique_ptr<State> state) : s_(std::move(state)) {}
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;
Network::~Network() = default;

Network::Network(const ModelSpec& spec, const std::string& backend, uint64_t seed, int threads)
    : s_(std::make_unique<State>()) {
  s_->spec = spec;
  s_->seed = seed;
  s_->backend = open(backend, threads);
  s_->model = std::make_unique<Model>(*s_->backend, spec, default_capacity(spec), seed);
}

Network Network::load(const std::string& path, const std::string& backend, int threads) {
  const SavedModel saved = load_model(path);
  Network net(saved.spec, backend, 0, threads);
  net.s_->model->set_params(saved.params);
  net.s_->model->set_state(saved.state);
  net.s_->norm = saved.normalization();
  net.s_->class_names = saved.class_names;
  net.s_->normalized = true;
  net.s_->provenance = saved.provenance;
  return net;
}

std::vector<EpochStats> Network::train(const Dataset& train, const Dataset* test,
                                       const TrainOptions& o, const ProgressFn& on_progress,
                                       const EpochFn& on_epoch) {
  PCNN_CHECK(o.epochs >= 1, "train: epochs must be at least 1, got " << o.epochs);
  PCNN_CHECK(o.batch >= 1, "train: batch must be at least 1, got " << o.batch);
  PCNN_CHECK(o.progress_every_s >= 0 && o.progress_every_steps >= 0,
             "train: progress intervals cannot be negative");
  train.check_labels(s_->spec.classes);
  if (test) test->check_labels(s_->spec.classes);
  if (!s_->normalized) {
    s_->norm = normalization_of(train);
    s_->normalized = true;
  }
  if (int(train.class_names.size()) == s_->spec.classes) s_->class_names = train.class_names;
  // rebuilt for a larger batch or another precision, weights kept
  if (o.batch > s_->model->max_batch() || o.precision != s_->model->precision()) {
    const std::vector<float> params = s_->model->get_params();
    const std::vector<float> state = s_->model->get_state();
    const int capacity = std::max(o.batch, s_->model->max_batch());
    s_->model.reset();
    s_->model =
        std::make_unique<Model>(*s_->backend, s_->spec, capacity, s_->seed, true, o.precision);
    s_->model->set_params(params);
    s_->model->set_state(state);
  }
  TrainConfig cfg;
  cfg.epochs = o.epochs;
  cfg.batch = o.batch;
  cfg.seed = o.seed;
  cfg.optimizer.kind = o.optimizer;
  cfg.optimizer.lr = o.learning_rate;
  cfg.optimizer.momentum = o.momentum;
  cfg.lr_decay = o.lr_decay;
  cfg.lr_schedule = o.cosine_schedule ? LrSchedule::Cosine : LrSchedule::Exp;
  cfg.augment = o.augment;
  Trainer trainer(*s_->backend, *s_->model, train, s_->norm, cfg);
  if (on_progress && (o.progress_every_s > 0 || o.progress_every_steps > 0))
    trainer.on_progress([&](const StepProgress& p) {
      Progress q;
      q.epoch = p.epoch;
      q.epochs = o.epochs;
      q.step = p.step;
      q.steps = p.steps;
      q.loss = p.images > 0 ? p.loss_sum / double(p.images) : 0;
      q.accuracy = p.images > 0 ? p.correct / double(p.images) : 0;
      q.seconds = p.seconds;
      on_progress(q);
    }, o.progress_every_s, o.progress_every_steps);

  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  std::vector<EpochStats> epochs;
  std::unique_ptr<Evaluator> test_eval;  // the test set uploaded once, not every epoch
  if (test) test_eval = std::make_unique<Evaluator>(*s_->backend, *s_->model, *test, s_->norm);
  for (int e = 0; e < o.epochs; ++e) {
    EpochStats st = trainer.train_epoch(e);
    if (test) {
      const EvalResult r = test_eval->run(*s_->model);
      st.test_accuracy = r.accuracy;
      st.test_loss = r.loss;
    }
    st.elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
    if (on_epoch) on_epoch(st);
    epochs.push_back(st);
  }
  // The data fields as `pcnn train --save` writes them: the whole sets a part was cut from.
  Provenance& p = s_->provenance;
  p = data_provenance(train, test, train.source);
  p.recipe = recipe(o);
  p.epochs = o.epochs;
  p.final_accuracy = test ? epochs.back().test_accuracy : -1;
  return epochs;
}

EvalResult Network::evaluate(const Dataset& data) {
  PCNN_CHECK(data.count >= 1, "evaluate: the data set is empty");
  data.check_labels(s_->spec.classes);
  return pcnn::evaluate(*s_->backend, *s_->model, data, s_->norm);
}

std::vector<Prediction> Network::predict(const Dataset& images) {
  PCNN_CHECK(images.count >= 1, "predict: the data set is empty");
  PCNN_CHECK(images.images.size() == size_t(images.count) * images.image_size(),
             "predict: " << images.images.size() << " pixel bytes for " << images.count
                         << " images of " << images.channels << "x" << images.height << "x"
                         << images.width);
  if (images.labels.size() != size_t(images.count)) {  // read_images() leaves them out
    Dataset labelled = images;
    labelled.labels.assign(size_t(images.count), 0);  // read by the gather, not used
    return predict(labelled);
  }
  Backend& be = *s_->backend;
  Model& model = *s_->model;
  const int classes = model.classes();
  const int batch = model.max_batch();
  const BatchLayout full = layout_for(model, batch, images);
  DeviceData data(be, images, s_->norm);
  DeviceArray<float> x(be, size_t(batch) * model.input_shape().size());
  DeviceArray<int32_t> y(be, size_t(batch));
  std::vector<float> logits(size_t(batch) * classes);
  std::vector<Prediction> out;
  out.reserve(size_t(images.count));
  for (int first = 0; first < images.count; first += batch) {
    BatchLayout l = full;
    l.batch = std::min(batch, images.count - first);
    be.gather_batch(data.view(), first, l, x.get(), y.get());
    model.forward(l.batch, x.get());
    be.download(logits.data(), model.logits(), size_t(l.batch) * classes * sizeof(float));
    for (int i = 0; i < l.batch; ++i) {
      const float* row = &logits[size_t(i) * classes];
      // Softmax shifted by the row's maximum (no overflow); the first maximum is the label,
      // as the loss kernels count it.
      const int label = int(std::max_element(row, row + classes) - row);
      Prediction p;
      p.label = label;
      p.probabilities.resize(size_t(classes));
      double sum = 0;
      for (int k = 0; k < classes; ++k) sum += std::exp(double(row[k]) - row[label]);
      for (int k = 0; k < classes; ++k)
        p.probabilities[size_t(k)] = float(std::exp(double(row[k]) - row[label]) / sum);
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<Prediction> Network::predict(const uint8_t* images, int count, int channels, int height,
                                         int width) {
  return predict(unlabelled(images, count, channels, height, width));
}

std::vector<Prediction> Network::predict(const uint8_t* images, int count, int height, int width) {
  return predict(images, count, 1, height, width);
}

Prediction Network::predict(const uint8_t* image, int height, int width) {
  return predict(image, 1, height, width).at(0);
}

void Network::save(const std::string& path) const {
  SavedModel sm;
  sm.spec = s_->spec;
  sm.set_normalization(s_->norm);
  sm.class_names = s_->class_names;
  sm.params = s_->model->get_params();
  sm.state = s_->model->get_state();
  sm.provenance = s_->provenance;
  save_model(path, sm);
}

std::vector<Prediction> Network::predict_files(const std::vector<std::string>& paths) {
  return predict(read_image_files(paths, s_->spec.in_c, s_->spec.in_h, s_->spec.in_w));
}

const std::vector<std::string>& Network::class_names() const { return s_->class_names; }
const ModelSpec& Network::spec() const { return s_->spec; }
std::string Network::backend_name() const { return s_->backend->name(); }
std::string Network::device_name() const { return s_->backend->device_name(); }
size_t Network::parameter_count() const { return s_->model->param_count(); }

}  // namespace pcnn::api
