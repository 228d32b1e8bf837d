// pcnn train: train a model on a data set, one progress line per epoch, optional CSV log,
// training-curve plot and saved model.
#include <chrono>
#include <cstdio>
#include <fstream>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/common.hpp"
#include "core/check.hpp"
#include "models/serialize.hpp"
#include "report/training_plot.hpp"
#include "train/trainer.hpp"

namespace pcnn::cli {

namespace {
struct TrainOptions {
  std::string backend, model = "lenet5", data, save, log, plot;
  int epochs = 10, batch = 64, threads = 0;
  uint32_t seed = 1;
  // Defaults chosen by a sweep on Fashion-MNIST (notes/measurements.md): Adam at 2e-3, the
  // learning rate shrinking by a quarter each epoch, reaches 90.7% with LeNet-5 in 10 epochs.
  std::string optimizer = "adam";
  float lr = -1, momentum = 0.9f, weight_decay = 0.f, lr_decay = 0.75f;
  bool no_graphs = false;
  int gpus = 1;
  std::string collective;
};

int run_train(const TrainOptions& o) {
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  PCNN_CHECK(o.epochs >= 1, "--epochs must be at least 1");
  PCNN_CHECK(o.batch >= 1, "--batch-size must be at least 1");
  PCNN_CHECK(o.optimizer == "sgd" || o.optimizer == "adam",
             "unknown optimizer '" << o.optimizer << "' (sgd, adam)");
  const ModelSpec spec = load_spec(o.model);
  PCNN_CHECK(o.gpus >= 1, "--gpus must be at least 1");
  // Replica r runs on device r; replica 0 also evaluates and is saved.
  std::vector<std::unique_ptr<Backend>> replicas;
  replicas.push_back(open_backend(o.backend, o.threads));
  Backend* be = replicas[0].get();
  const DatasetPair data = load_data(o.data);  // after the backend: a bad name fails fast
  data.check_labels(spec.classes);  // a label past the logits would index the loss out of bounds
  for (int r = 1; r < o.gpus; ++r) {
    BackendOptions opts;
    opts.threads = o.threads;
    opts.device = r;
    replicas.push_back(make_backend(be->name(), opts));
  }

  Normalization norm;
  float stddev = 1.f;
  pixel_stats(data.train, norm.mean, stddev);
  norm.inv_std = 1.f / stddev;

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

  // Evaluation runs in larger batches than training where memory allows.
  PCNN_CHECK(o.batch % o.gpus == 0, "--batch-size " << o.batch << " does not split evenly over "
                                                    << o.gpus << " GPUs");
  std::vector<std::unique_ptr<Model>> models;
  std::vector<Backend*> bes;
  std::vector<Model*> ms;
  for (auto& r : replicas) {
    models.push_back(std::make_unique<Model>(*r, spec, std::max(o.batch / o.gpus, 256), o.seed));
    bes.push_back(r.get());
    ms.push_back(models.back().get());
  }
  Model& model = *models[0];
  std::unique_ptr<Collective> collective;
  // With one GPU, --collective still routes the step through the all-reduce (a test of it).
  if (o.gpus > 1 || !o.collective.empty()) collective = make_collective(be->name(), bes, o.collective);
  Trainer trainer(bes, ms, collective.get(), data.train, norm, cfg);

  std::printf("pcnn train: %s on %s (%d train / %d test images), backend %s [%s], batch %d, %s lr %g\n",
              spec.name.c_str(), data.source.c_str(), data.train.count, data.test.count,
              be->name().c_str(), be->device_name().c_str(), o.batch, o.optimizer.c_str(),
              double(cfg.optimizer.lr));
  if (collective)
    std::printf("data parallel over %d replicas (%d images each per step), all-reduce: %s\n",
                o.gpus, o.batch / o.gpus, collective->name().c_str());
  std::ofstream log;
  if (!o.log.empty()) {
    log.open(o.log);
    PCNN_CHECK(log, "cannot write the log '" << o.log << "'");
    log << "epoch,train_loss,test_accuracy,images_per_s,elapsed_s\n";
  }
  std::vector<EpochStats> history;
  const auto t_train = clock::now();
  for (int e = 0; e < o.epochs; ++e) {
    EpochStats st = trainer.train_epoch(e);
    const EvalResult test = evaluate(*be, model, data.test, norm);
    st.test_accuracy = test.accuracy;
    st.test_loss = test.loss;
    st.elapsed_s = std::chrono::duration<double>(clock::now() - t_train).count();
    std::printf("epoch %2d/%d  train_loss %.4f  test_acc %.4f  %10.0f images/s  elapsed %.1f s\n",
                st.epoch, o.epochs, st.train_loss, st.test_accuracy, st.images_per_s,
                st.elapsed_s);
    std::fflush(stdout);
    if (log) {
      log << st.epoch << "," << st.train_loss << "," << st.test_accuracy << ","
          << st.images_per_s << "," << st.elapsed_s << "\n";
      log.flush();
    }
    history.push_back(st);
  }
  if (!o.save.empty()) {
    SavedModel sm;
    sm.spec = spec;
    sm.mean = norm.mean;
    sm.inv_std = norm.inv_std;
    sm.params = model.get_params();
    save_model(o.save, sm);
    std::printf("saved model to %s\n", o.save.c_str());
  }
  if (!o.plot.empty()) {
    write_training_plot(o.plot, spec.name + " on " + be->name(), history);
    std::printf("wrote training curves to %s\n", o.plot.c_str());
  }
  std::printf("final test accuracy %.4f, %.1f s in all, peak memory %.0f MiB\n",
              history.back().test_accuracy,
              std::chrono::duration<double>(clock::now() - t_start).count(), peak_rss_mib());
  return 0;
}
}  // namespace

Command add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  auto* sub = app.add_subcommand("train", "Train a model (default: LeNet-5 on Fashion-MNIST)");
  sub->add_option("--backend,-b", o->backend, "serial, openmp, kokkos, cuda, cudnn (default: fastest usable here)");
  sub->add_option("--model,-m", o->model, "lenet5, simard2003, mlp, or a JSON spec file")->capture_default_str();
  sub->add_option("--data,-d", o->data, "folder with the four MNIST-format files (default: Fashion-MNIST)");
  sub->add_option("--epochs,-e", o->epochs, "training epochs")->capture_default_str();
  sub->add_option("--batch-size", o->batch, "images per training step")->capture_default_str();
  sub->add_option("--optimizer", o->optimizer, "sgd or adam")->capture_default_str();
  sub->add_option("--lr", o->lr, "learning rate (default: 0.002 for adam, 0.05 for sgd)");
  sub->add_option("--momentum", o->momentum, "SGD momentum")->capture_default_str();
  sub->add_option("--weight-decay", o->weight_decay, "L2 weight decay")->capture_default_str();
  sub->add_option("--lr-decay", o->lr_decay, "learning rate factor per epoch")->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of weights and shuffling")->capture_default_str();
  sub->add_option("--threads", o->threads, "CPU threads (0 = all cores)")->capture_default_str();
  sub->add_option("--save", o->save, "write the trained model to this file");
  sub->add_option("--log", o->log, "write per-epoch CSV to this file");
  sub->add_option("--plot", o->plot, "write training curves (SVG) to this file");
  sub->add_flag("--no-graphs", o->no_graphs, "do not replay the step as a CUDA graph");
  sub->add_option("--gpus", o->gpus, "data-parallel replicas, one per GPU (device 0..N-1)")
      ->capture_default_str();
  sub->add_option("--collective", o->collective, "all-reduce for --gpus > 1: nccl (cuda default) or host");
  return {sub, [o] { return run_train(*o); }};
}

}  // namespace pcnn::cli
