// pcnn train: train a model on a data set, with a model summary, progress within epochs, one
// line per epoch, and optionally a CSV log, training-curve plot and saved model.
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <numeric>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/common.hpp"
#include "apps/pcnn/model_summary.hpp"
#include "apps/pcnn/options.hpp"
#include "apps/pcnn/progress_display.hpp"
#include "core/check.hpp"
#include "models/serialize.hpp"
#include "report/training_log.hpp"
#include "report/training_plot.hpp"
#include "train/trainer.hpp"

namespace pcnn::cli {

namespace {
struct TrainOptions {
  std::string backend, model = "lenet5", data, save, log, plot;
  int epochs = 10, batch = 64, threads = 0, limit = 0;
  uint32_t seed = 1;
  // Defaults chosen by a sweep on Fashion-MNIST (notes/measurements.md): Adam at 2e-3, the
  // learning rate shrinking by a quarter each epoch, reaches 90.7% with LeNet-5 in 10 epochs.
  std::string optimizer = "adam";
  float lr = -1, momentum = 0.9f, weight_decay = 0.f, lr_decay = 0.75f;
  bool no_graphs = false, quiet = false;
  int gpus = 1, progress_every = 0, log_every = 0;
  std::string collective;
};

// One backend and one model per replica (device r runs replica r), and their all-reduce.
struct Replicas {
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::unique_ptr<Model>> models;
  std::unique_ptr<Collective> collective;

  template <class T>
  static std::vector<T*> pointers(const std::vector<std::unique_ptr<T>>& owned) {
    std::vector<T*> p;
    for (const auto& o : owned) p.push_back(o.get());
    return p;
  }
};

// Replica 0's backend: opened first, so that a bad backend fails before the data is read.
void check_gpus(const TrainOptions& o, const Backend& be) {
  if (o.gpus > 1 && be.is_host_memory() && o.collective.empty())
    throw CLI::ValidationError("--gpus", "backend " + be.name() + " runs on the CPU, not on GPUs "
                               "(add --collective host to run " + std::to_string(o.gpus) +
                               " replicas on the CPU anyway)");
}

Replicas open_replicas(const TrainOptions& o, std::unique_ptr<Backend> first,
                       const ModelSpec& spec) {
  Replicas r;
  r.backends.push_back(std::move(first));
  for (int i = 1; i < o.gpus; ++i) {
    BackendOptions opts;
    opts.threads = o.threads;
    opts.device = i;
    r.backends.push_back(make_backend(r.backends[0]->name(), opts));
  }
  // Evaluation runs in larger batches than training where memory allows.
  for (auto& be : r.backends)
    r.models.push_back(std::make_unique<Model>(*be, spec, std::max(o.batch / o.gpus, 256), o.seed));
  // With one GPU, --collective still routes the step through the all-reduce (a test of it).
  if (o.gpus > 1 || !o.collective.empty())
    r.collective = make_collective(r.backends[0]->name(), Replicas::pointers(r.backends),
                                   o.collective);
  return r;
}

TrainConfig train_config(const TrainOptions& o) {
  TrainConfig cfg;
  cfg.epochs = o.epochs;
  cfg.batch = o.batch;
  cfg.seed = o.seed;
  cfg.lr_decay = o.lr_decay;
  cfg.graphs = !o.no_graphs;
  cfg.optimizer.kind = o.optimizer;
  cfg.optimizer.lr = o.lr > 0 ? o.lr : (o.optimizer == "adam" ? 2e-3f : 0.05f);
  cfg.optimizer.momentum = o.momentum;
  cfg.optimizer.weight_decay = o.weight_decay;
  return cfg;
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

// The epoch loop: progress while each epoch runs, its line when it ends, and the rows of the
// log (kept for the plot, and written to --log as they come).
std::vector<LogRow> train_epochs(const TrainOptions& o, Trainer& trainer, Backend& be, Model& model,
                                 const Dataset& test, const Normalization& norm,
                                 ProgressDisplay& display) {
  using clock = std::chrono::steady_clock;
  const auto t_train = clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t_train).count(); };
  std::unique_ptr<TrainingLogFile> log;
  if (!o.log.empty()) log = std::make_unique<TrainingLogFile>(o.log);
  std::vector<LogRow> rows;
  const auto add_row = [&](const LogRow& row) {
    if (log) log->add(row);
    rows.push_back(row);
  };
  StepProgress last_logged;  // the step row before, in this epoch: rows cover the steps between
  const int poll_steps = std::gcd(display.poll_steps(), o.log_every);  // gcd(n, 0) == n
  if (display.poll_seconds() > 0 || poll_steps > 0)
    trainer.on_progress([&](const StepProgress& p) {
      display.progress(p, elapsed());
      if (o.log_every == 0 || p.step % o.log_every != 0) return;
      if (last_logged.epoch != p.epoch) last_logged = StepProgress{};
      add_row(step_row(p, last_logged, trainer.learning_rate(p.epoch - 1), elapsed()));
      last_logged = p;
    }, display.poll_seconds(), poll_steps);

  for (int e = 0; e < o.epochs; ++e) {
    EpochStats st = trainer.train_epoch(e);
    const EvalResult r = evaluate(be, model, test, norm);
    st.test_accuracy = r.accuracy;
    st.test_loss = r.loss;
    st.elapsed_s = elapsed();
    display.print(format("epoch %2d/%d  train_loss %.4f  test_acc %.4f  %10.0f images/s  "
                         "elapsed %.1f s", st.epoch, o.epochs, st.train_loss, st.test_accuracy,
                         st.images_per_s, st.elapsed_s));
    add_row(epoch_row(st));
  }
  return rows;
}

int run_train(const TrainOptions& o) {
  const auto t_start = std::chrono::steady_clock::now();
  if (o.batch % o.gpus != 0)
    throw CLI::ValidationError("--batch-size", std::to_string(o.batch) + " does not split " +
                               "evenly over " + std::to_string(o.gpus) + " replicas (--gpus)");
  if (o.limit > 0 && o.limit < o.batch)
    throw CLI::ValidationError("--limit", "must be at least the batch size (" +
                               std::to_string(o.batch) + "), got " + std::to_string(o.limit));
  const ModelSpec spec = load_spec(o.model);
  std::unique_ptr<Backend> first = open_backend(o.backend, o.threads);
  check_gpus(o, *first);
  const DatasetPair data = load_data(o.data, o.limit);
  data.check_labels(spec.classes);  // a label past the logits would index the loss out of bounds
  check_batch_fits(data, o.batch);  // before any model is built for that batch
  Replicas replicas = open_replicas(o, std::move(first), spec);
  Backend& be = *replicas.backends[0];
  Model& model = *replicas.models[0];

  Normalization norm;
  float stddev = 1.f;
  pixel_stats(data.train, norm.mean, stddev);
  norm.inv_std = 1.f / stddev;
  const TrainConfig cfg = train_config(o);
  Trainer trainer(Replicas::pointers(replicas.backends), Replicas::pointers(replicas.models),
                  replicas.collective.get(), data.train, norm, cfg);

  ProgressDisplay display(choose_progress_style(o.quiet, o.progress_every), o.epochs,
                          o.progress_every);
  if (!o.quiet) {
    display.print(format("pcnn train: %s on %s (%d train / %d test images), backend %s [%s], "
                         "batch %d, %s lr %g", spec.name.c_str(), data.source.c_str(),
                         data.train.count, data.test.count, be.name().c_str(),
                         be.device_name().c_str(), o.batch, o.optimizer.c_str(),
                         double(cfg.optimizer.lr)));
    if (replicas.collective)
      display.print(format("data parallel over %d replicas%s (%d images each per step), "
                           "all-reduce: %s", o.gpus, be.is_host_memory() ? " on the CPU" : "",
                           o.batch / o.gpus, replicas.collective->name().c_str()));
    display.print(model_summary(model) + format("%d steps of %d images per epoch",
                                                trainer.steps_per_epoch(), o.batch));
  }
  const std::vector<LogRow> rows =
      train_epochs(o, trainer, be, model, data.test, norm, display);

  if (!o.save.empty()) {
    SavedModel sm;
    sm.spec = spec;
    sm.mean = norm.mean;
    sm.inv_std = norm.inv_std;
    sm.params = model.get_params();
    save_model(o.save, sm);
    if (!o.quiet) display.print("saved model to " + o.save);
  }
  if (!o.plot.empty()) {
    write_training_plot(o.plot, spec.name + " on " + be.name(), rows);
    if (!o.quiet) display.print("wrote training curves to " + o.plot);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  display.print(format("final test accuracy %.4f, %.1f s in all, peak memory %.0f MiB",
                       rows.back().test_accuracy, seconds, peak_rss_mib()));
  return kExitSuccess;
}
}  // namespace

Command add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  auto* sub = app.add_subcommand("train", "Train a model (default: LeNet-5 on Fashion-MNIST)");
  add_backend_option(*sub, o->backend);
  add_model_option(*sub, o->model);
  sub->add_option("--data,-d", o->data,
                  "folder with the four MNIST-format files (default: Fashion-MNIST)")
      ->check(not_empty());
  sub->add_option("--limit", o->limit,
                  "use only the first N training and N test images (quick runs)")
      ->check(whole_number(1, kMaxImages));
  sub->add_option("--epochs,-e", o->epochs, "training epochs")
      ->check(whole_number(1, kMaxEpochs))->capture_default_str();
  add_batch_option(*sub, o->batch, "images per training step");
  sub->add_option("--optimizer", o->optimizer, "how parameters follow their gradients")
      ->check(one_of({"sgd", "adam"}, "optimizer"))->capture_default_str();
  sub->add_option("--lr", o->lr, "learning rate (default: 0.002 for adam, 0.05 for sgd)")
      ->check(real_number<float>(above(0)));
  sub->add_option("--momentum", o->momentum, "SGD momentum, in [0, 1)")
      ->check(real_number<float>({0, false, 1, true}))->capture_default_str();
  sub->add_option("--weight-decay", o->weight_decay, "L2 weight decay")
      ->check(real_number<float>(at_least(0)))->capture_default_str();
  sub->add_option("--lr-decay", o->lr_decay, "learning rate factor per epoch")
      ->check(real_number<float>(above(0)))->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of weights and shuffling")
      ->check(whole_number(0, kMaxSeed))->capture_default_str();
  sub->add_option("--threads", o->threads, "CPU threads (0 = all cores)")
      ->check(whole_number(0, kMaxThreads))->capture_default_str();
  sub->add_option("--save", o->save, "write the trained model to this file")
      ->check(not_empty());
  sub->add_option("--log", o->log,
                  "write the training log here (CSV: a row per epoch, and per --log-every steps)")
      ->check(not_empty());
  sub->add_option("--log-every", o->log_every,
                  "also log a row every N steps (loss, accuracy and speed over those steps)")
      ->check(whole_number(1, kMaxSteps));
  sub->add_option("--plot", o->plot, "write the training curves (SVG) to this file")
      ->check(not_empty());
  sub->add_option("--progress-every", o->progress_every,
                  "a progress line every N steps (default: redrawn 4x a second on a terminal, "
                  "a line every 10 s otherwise)")->check(whole_number(1, kMaxSteps));
  sub->add_flag("--quiet,-q", o->quiet, "print only the epoch lines and the final line");
  sub->add_flag("--no-graphs", o->no_graphs, "do not replay the step as a CUDA graph");
  sub->add_option("--gpus", o->gpus, "data-parallel replicas, one per GPU (device 0..N-1)")
      ->check(whole_number(1, kMaxReplicas))->capture_default_str();
  sub->add_option("--collective", o->collective,
                  "all-reduce across replicas (default: nccl on cuda, else host)")
      ->check(one_of({"nccl", "host"}, "collective"));
  return {sub, [o] { return run_train(*o); }};
}

}  // namespace pcnn::cli
