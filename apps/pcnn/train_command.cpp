// pcnn train: train a model on a data set, with a model summary, progress within epochs, one
// line per epoch, and optionally a CSV log, training-curve plot and saved model; checkpoints,
// --resume, and a clean stop on SIGINT / SIGTERM (apps/pcnn/resume.cpp checks a resumed run).
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <nlohmann/json.hpp>
#include <numeric>

#include "apps/pcnn/augment_options.hpp"
#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/common.hpp"
#include "apps/pcnn/model_summary.hpp"
#include "apps/pcnn/options.hpp"
#include "apps/pcnn/output_paths.hpp"
#include "apps/pcnn/progress_display.hpp"
#include "apps/pcnn/resume.hpp"
#include "apps/pcnn/stop_signal.hpp"
#include "core/check.hpp"
#include "data/idx_cache.hpp"
#include "data/subset.hpp"
#include "models/checkpoint.hpp"
#include "models/serialize.hpp"
#include "models/atomic_write.hpp"
#include "report/chance_level.hpp"
#include "report/run_timings.hpp"
#include "report/training_log.hpp"
#include "report/training_plot.hpp"
#include "train/trainer.hpp"

namespace pcnn::cli {

namespace {
// The exit code of a run stopped by SIGINT or SIGTERM, as a shell reports a SIGINT death.
constexpr int kExitInterrupted = 130;

struct TrainOptions {
  std::string backend, model = "lenet5", data, save, log, plot;
  int epochs = 10, batch = 64, threads = 0, limit = 0;
  uint32_t seed = 1;
  // Defaults chosen by a sweep on Fashion-MNIST (notes/measurements.md): Adam at 2e-3, the
  // learning rate shrinking by a quarter each epoch, reaches 90.7% with LeNet-5 in 10 epochs.
  std::string optimizer = "adam";
  float lr = -1, momentum = 0.9f, weight_decay = 0.f, lr_decay = 0.75f;
  std::string lr_schedule = "exp";
  std::string precision = "fp32";  // --precision: the activations' storage (core/precision.hpp)
  std::string recipe;  // --recipe: a named set of the options above (apply_recipe)
  bool no_graphs = false, quiet = false, timings = false, no_data_cache = false;
  std::string summary;  // --summary: the run summary (JSON) goes here
  int gpus = 1, progress_every = 0, log_every = 0;
  std::string collective;
  std::string checkpoint, resume;
  int checkpoint_every = 0;
  std::string on_nan = "stop";
  AugmentOptions augment_given;  // as given (apps/pcnn/augment_options.hpp)
  AugmentConfig augment;         // what the run applies: from augment_given or the checkpoint
  std::string data_format;
  double val_split = 0;  // 0: no validation set
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
    r.models.push_back(std::make_unique<Model>(*be, spec, std::max(o.batch / o.gpus, 256), o.seed,
                                               true, *find_precision(o.precision)));
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
  cfg.lr_schedule = o.lr_schedule == "cosine" ? LrSchedule::Cosine : LrSchedule::Exp;
  cfg.lr_decay = o.lr_decay;
  cfg.graphs = !o.no_graphs;
  cfg.on_nan = o.on_nan == "skip" ? NanPolicy::Skip : NanPolicy::Stop;
  cfg.optimizer.kind = o.optimizer;
  cfg.optimizer.lr = o.lr > 0 ? o.lr : (o.optimizer == "adam" ? 2e-3f : 0.05f);
  cfg.optimizer.momentum = o.momentum;
  cfg.optimizer.weight_decay = o.weight_decay;
  cfg.augment = o.augment;
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

// How the epoch loop ended: the log rows (kept for the plot, written to --log as they came)
// and whether a signal stopped it before the last epoch.
struct EpochsResult {
  std::vector<LogRow> rows;
  // Where the loop's time went (--timings): the first steps (eager, then captured where the
  // backend can) until the device finished them, the other steps, and evaluation.
  SteadyTime first_start{}, first_end{}, eval_start{};
  double train_s = 0, eval_s = 0;
  int first_steps = 0;
  bool captured = false;  // the second step was captured as a graph
  int64_t device_in_use = -1;  // the device's memory in use after the first steps (GPU backends)
  bool interrupted = false;
  std::string fault;  // --on-nan stop: what stopped the run (describe_fault)
  int64_t global_step = 0;
};

// The epoch line's note on skipped steps, and (once per epoch) a warning naming the first.
std::string skipped_note(const EpochStats& st, const Model& model, int steps_per_epoch) {
  if (st.skipped_steps == 0) return "";
  if (model.precision() == Precision::F16 && !st.fault_stop)  // the loss scale finding its level
    return format("  %lld step%s skipped: loss scale now 2^%d",
                  static_cast<long long>(st.skipped_steps), st.skipped_steps == 1 ? "" : "s",
                  std::ilogb(st.loss_scale));  // a power of two
  const std::string what = st.first_fault.step > 0
      ? describe_fault(model, st.first_fault, steps_per_epoch)
      : "the first of them before the run was resumed";
  std::fflush(stdout);
  std::fprintf(stderr, "pcnn train: warning: epoch %d: %lld step%s skipped (--on-nan skip): %s\n",
               st.epoch, static_cast<long long>(st.skipped_steps),
               st.skipped_steps == 1 ? "" : "s", what.c_str());
  return format("  %lld step%s skipped: not finite", static_cast<long long>(st.skipped_steps),
                st.skipped_steps == 1 ? "" : "s");
}

// The epoch loop: progress while each epoch runs, its line when it ends, the rows of the log,
// and checkpoints every --checkpoint-every steps and at every epoch's end. ckpt holds the run's
// settings (and, when resuming, where it was); the loop fills in the rest before each write.
EpochsResult train_epochs(const TrainOptions& o, Trainer& trainer, Backend& be, Model& model,
                          const Dataset& test, const Dataset* val, const Normalization& norm,
                          ProgressDisplay& display, Checkpoint& ckpt) {
  using clock = std::chrono::steady_clock;
  const auto t_train = clock::now();
  const double elapsed_before = ckpt.elapsed_s;  // a resumed run's clock goes on
  const auto elapsed = [&] {
    return elapsed_before + std::chrono::duration<double>(clock::now() - t_train).count();
  };
  std::unique_ptr<TrainingLogFile> log;
  if (!o.log.empty()) log = std::make_unique<TrainingLogFile>(o.log, val != nullptr);
  // Made at the first evaluation (its time counts as evaluation), then kept: the sets are
  // uploaded once, not after every epoch.
  std::unique_ptr<Evaluator> test_eval, val_eval;
  EpochsResult result;
  std::vector<LogRow>& rows = result.rows;
  const auto add_row = [&](const LogRow& row) {
    if (log) log->add(row);
    rows.push_back(row);
  };
  for (const LogRow& row : ckpt.history) add_row(row);  // the log of a resumed run goes on too
  // The step row before, in this epoch: rows cover the steps between. From a checkpoint its
  // seconds count back from the moment the checkpoint was taken, which the resumed epoch's
  // clock starts from again.
  StepProgress last_logged = ckpt.log_mark;
  const int poll_steps = std::gcd(display.poll_steps(), o.log_every);  // gcd(n, 0) == n
  if (display.poll_seconds() > 0 || poll_steps > 0)
    trainer.on_progress([&](const StepProgress& p) {
      display.progress(p, elapsed());
      if (o.log_every == 0 || p.step % o.log_every != 0) return;
      if (last_logged.epoch != p.epoch) last_logged = StepProgress{};
      add_row(step_row(p, last_logged, trainer.learning_rate(p.epoch - 1), elapsed()));
      last_logged = p;
    }, display.poll_seconds(), poll_steps);

  auto epoch_start = clock::now();
  const auto write_checkpoint = [&] {
    ckpt.state = trainer.state();
    ckpt.history = rows;
    ckpt.log_mark = last_logged;
    ckpt.log_mark.seconds -= std::chrono::duration<double>(clock::now() - epoch_start).count();
    ckpt.elapsed_s = elapsed();
    save_checkpoint(o.checkpoint, ckpt);
  };
  const int steps = trainer.steps_per_epoch();
  const int64_t step0 = trainer.global_step();
  trainer.on_step([&](int, int step) {
    // The device finishes the first steps (where backends allocate and capture) before their
    // time is taken: one wait in the whole run.
    if (result.first_steps == 0 && (trainer.global_step() - step0 == 2 || step == steps)) {
      be.synchronize();
      result.first_end = clock::now();
      result.first_steps = int(trainer.global_step() - step0);
      result.captured = trainer.using_graph();
      result.device_in_use = be.device_memory_in_use();
    }
    if (step == steps) return true;  // the epoch's end evaluates, then checkpoints and stops
    if (stop_requested()) return false;
    if (o.checkpoint_every > 0 && trainer.global_step() % o.checkpoint_every == 0)
      write_checkpoint();
    return true;
  });

  for (int e = int(trainer.global_step() / steps); e < o.epochs; ++e) {
    epoch_start = clock::now();
    if (e == int(step0 / steps)) result.first_start = epoch_start;
    EpochStats st = trainer.train_epoch(e);
    const auto eval_start = clock::now();
    result.train_s += std::chrono::duration<double>(eval_start - epoch_start).count();
    if (st.fault_stop) result.fault = describe_fault(model, st.first_fault, steps);
    if (st.stopped) {  // by a signal, or by a fault inside the epoch
      result.interrupted = result.fault.empty();
      break;
    }
    if (result.eval_s == 0) result.eval_start = eval_start;
    if (!test_eval) test_eval = std::make_unique<Evaluator>(be, model, test, norm);
    const EvalResult r = test_eval->run(model);
    st.test_accuracy = r.accuracy;
    st.test_loss = r.loss;
    std::string validation;
    if (val) {
      if (!val_eval) val_eval = std::make_unique<Evaluator>(be, model, *val, norm);
      const EvalResult v = val_eval->run(model);
      st.val_accuracy = v.accuracy;
      st.val_loss = v.loss;
      validation = format("  val_loss %.4f  val_acc %.4f", v.loss, v.accuracy);
    }
    st.elapsed_s = elapsed();
    result.eval_s += std::chrono::duration<double>(clock::now() - eval_start).count();
    const std::string skipped =
        o.on_nan == "skip" || model.precision() == Precision::F16
            ? skipped_note(st, model, steps)
            : std::string();
    display.print(format("epoch %2d/%d  train_loss %.4f%s  test_acc %.4f  %10.0f images/s  "
                         "elapsed %.1f s%s", st.epoch, o.epochs, st.train_loss,
                         validation.c_str(), st.test_accuracy, st.images_per_s, st.elapsed_s,
                         skipped.c_str()));
    add_row(epoch_row(st));
    if (!o.checkpoint.empty()) write_checkpoint();
    if (!result.fault.empty()) break;  // a fault in the epoch's last steps: the epoch is whole
    if (stop_requested() && e + 1 < o.epochs) {
      result.interrupted = true;
      break;
    }
  }
  const bool stopped = result.interrupted || !result.fault.empty();
  if (stopped && !o.checkpoint.empty() && trainer.global_step() % steps != 0)
    write_checkpoint();  // stopped inside an epoch (at its end, the epoch's own one is written)
  result.global_step = trainer.global_step();
  return result;
}

// The recipe a saved model records: the settings that define the run, on one line.
std::string recipe_text(const RunSettings& r) {
  const std::string augment = r.augment.any() ? ", augment " + augment_text(r.augment) : "";
  const std::string schedule = r.lr_schedule == "cosine"
                                   ? std::string("cosine schedule")
                                   : format("lr decay %g", double(r.lr_decay));
  const std::string precision = r.precision == "fp32" ? "" : ", activations " + r.precision;
  return format("%s, %s lr %g momentum %g weight decay %g %s, batch %d, seed %u, %d epochs%s%s",
                r.spec.name.c_str(), r.optimizer.c_str(), double(r.lr), double(r.momentum),
                double(r.weight_decay), schedule.c_str(), r.batch, r.seed, r.epochs,
                augment.c_str(), precision.c_str());
}

// With --resume: the checkpoint's settings replace the options' (which may only repeat them);
// its data folder, backend and thread count are the defaults, and checkpoints go on to the
// same file at the same cadence.
void adopt_checkpoint(TrainOptions& o, const Checkpoint& c, const CLI::App& cmd) {
  const RunSettings& r = c.run;
  const ResumeCheck check(cmd, o.resume);
  // An option given must repeat the checkpoint's value; the run then takes the checkpoint's.
  const auto adopt = [&](const char* option, auto& given, const auto& saved) {
    check.same(option, given, saved);
    given = saved;
  };
  check.same_model(o.model, r.spec);
  adopt("--optimizer", o.optimizer, r.optimizer);
  adopt("--lr", o.lr, r.lr);
  adopt("--momentum", o.momentum, r.momentum);
  adopt("--weight-decay", o.weight_decay, r.weight_decay);
  adopt("--lr-decay", o.lr_decay, r.lr_decay);
  adopt("--lr-schedule", o.lr_schedule, r.lr_schedule);
  adopt("--precision", o.precision, r.precision);
  adopt("--batch-size", o.batch, r.batch);
  adopt("--epochs", o.epochs, r.epochs);
  adopt("--limit", o.limit, r.limit);
  adopt("--seed", o.seed, r.seed);
  adopt("--gpus", o.gpus, r.replicas);
  check_same_augment(check, o.augment_given, r.augment);
  o.augment = r.augment;
  check.same("--val-split", float(o.val_split), float(r.val_split));  // compared as given
  o.val_split = r.val_split;
  adopt("--data-format", o.data_format, r.data_format);
  if (o.data.empty()) o.data = c.data.data_folder;
  if (o.checkpoint.empty()) o.checkpoint = o.resume;
  if (o.checkpoint_every == 0) o.checkpoint_every = c.checkpoint_every;
  if (cmd.count("--backend") == 0) o.backend = c.backend;
  if (cmd.count("--threads") == 0) o.threads = c.threads;
}

RunSettings run_settings(const TrainOptions& o, const ModelSpec& spec, const TrainConfig& cfg,
                         const Normalization& norm) {
  RunSettings r;
  r.spec = spec;
  r.optimizer = cfg.optimizer.kind;
  r.lr = cfg.optimizer.lr;
  r.momentum = cfg.optimizer.momentum;
  r.weight_decay = cfg.optimizer.weight_decay;
  r.lr_decay = cfg.lr_decay;
  r.lr_schedule = o.lr_schedule;
  r.precision = o.precision;
  r.batch = cfg.batch;
  r.epochs = cfg.epochs;
  r.limit = o.limit;
  r.replicas = o.gpus;
  r.seed = cfg.seed;
  r.norm = norm;
  r.augment = cfg.augment;
  r.val_split = o.val_split;
  r.data_format = o.data_format;
  return r;
}

void save_trained_model(const std::string& path, const Checkpoint& c, const Provenance& source,
                        const std::vector<LogRow>& rows, const std::vector<float>& params,
                        const std::vector<float>& state,
                        const std::vector<std::string>& class_names) {
  SavedModel sm;
  sm.spec = c.run.spec;
  sm.set_normalization(c.run.norm);
  if (int(class_names.size()) == sm.spec.classes) sm.class_names = class_names;
  sm.params = params;
  sm.state = state;  // replica 0's running statistics (replicas do not average them)
  sm.provenance = source;
  sm.provenance.recipe = recipe_text(c.run);
  for (const LogRow& row : rows)
    if (row.is_epoch_row()) {
      sm.provenance.epochs = row.epoch;
      sm.provenance.final_accuracy = row.test_accuracy;
    }
  save_model(path, sm);
}

// Each file's read and decode (IDX folders), and the load as a whole around them.
void add_data_timings(RunTimings& timings, const DatasetPair& data, SteadyTime start,
                      SteadyTime end) {
  for (const FileLoad& f : data.file_loads)
    timings.add((f.cached ? "read (cached) " : "read+decode ") +
                    f.path.substr(f.path.rfind('/') + 1), f.start, f.end);
  timings.add("data loaded (all files)", start, end);
}

void add_loop_timings(RunTimings& timings, const EpochsResult& r) {
  using std::chrono::duration;
  if (r.first_start == SteadyTime{}) return;  // no epoch ran (a resumed run that was done)
  const double first =
      r.first_steps > 0 ? duration<double>(r.first_end - r.first_start).count() : 0;
  if (r.first_steps > 0)
    timings.add_seconds(format("first %d steps (eager%s)", r.first_steps,
                               r.captured ? ", graph capture" : ""),
                        r.first_start, first);
  timings.add_seconds("training (the other steps)",
                      r.first_steps > 0 ? r.first_end : r.first_start, r.train_s - first);
  if (r.eval_s > 0) timings.add_seconds("evaluation", r.eval_start, r.eval_s);
}

// --summary: the run's result and where its time went, as JSON, written whole or not at all.
nlohmann::json memory_json(const Backend& be, const ModelSpec& spec, int64_t device_in_use,
                           Precision precision) {
  const MemoryUsage m = be.memory_usage();
  nlohmann::json j = {{"backend_peak_bytes", m.peak},
                      {"backend_current_bytes", m.current},
                      {"precision", precision_name(precision)},
                      {"activation_bytes_per_image",
                       activation_bytes_per_image(spec, true, precision, be.stages_16bit())},
                      {"activation_bytes_per_image_unfused",
                       activation_bytes_per_image(spec, false, precision, be.stages_16bit())}};
  j["device_in_use_bytes"] = device_in_use >= 0 ? nlohmann::json(device_in_use) : nullptr;
  return j;
}

void write_run_summary(const std::string& path, const LogRow& last, double whole_s,
                       const std::vector<Phase>& phases, const nlohmann::json& memory) {
  nlohmann::json j;
  j["memory"] = memory;
  j["final_test_accuracy"] = last.test_accuracy;
  j["epochs"] = last.epoch;
  j["process_seconds"] = whole_s;
  j["timings"] = timings_json(phases);
  write_file_atomically(path, j.dump(2) + "\n");
}

// What training reads from the data, ready before the model is built: the sets as --limit and
// --val-split leave them, checked against the model (and the checkpoint), and the input
// statistics. Runs beside the backend's start-up (run_train).
struct PreparedData {
  DatasetPair data;
  Provenance source;  // the whole folder, whatever --limit keeps
  std::unique_ptr<Dataset> val;
  Normalization norm;
  SteadyTime loaded, done;  // the files read; the checks and statistics done
};

PreparedData prepare_data(const TrainOptions& o, const ModelSpec& spec, const Checkpoint* resumed,
                          const std::string& cache_dir) {
  PreparedData r;
  r.data = load_data(o.data, 0, o.data_format, &spec, cache_dir);
  r.loaded = std::chrono::steady_clock::now();
  DatasetPair& data = r.data;
  // The model file and the checkpoint describe the whole folder, whatever --limit keeps:
  // `pcnn eval` compares it with the whole folder too.
  r.source = data_provenance(data);
  keep_first(data, o.limit);
  // Held out of what --limit kept, by a shuffle keyed by --seed; the test set is untouched.
  if (o.val_split > 0) {
    try {
      r.val = std::make_unique<Dataset>(split_validation(data.train, o.val_split, o.seed));
    } catch (const Error& e) {
      throw CLI::ValidationError("--val-split", e.what());
    }
  }
  data.check_classes(spec.classes, spec.name);
  data.check_labels(spec.classes);  // a label past the logits would index the loss out of bounds
  check_batch_fits(data, o.batch);  // before any model is built for that batch
  if (resumed) check_same_data(*resumed, r.source, data.source, o.resume);
  r.norm = resumed ? resumed->run.norm : normalization_of(data.train);
  r.done = std::chrono::steady_clock::now();
  return r;
}

// --recipe NAME: the recipe's values for the options not given on the command line. fast: the
// network, batch, rate and schedule that reach 91 % on Fashion-MNIST in the fewest epochs found
// (notes/measurements.md, time to accuracy).
void apply_recipe(TrainOptions& o, const CLI::App& cmd) {
  if (o.recipe.empty()) return;
  if (!o.resume.empty())
    throw CLI::ValidationError("--recipe",
                               "a checkpoint already holds its run's settings "
                               "(--resume)");
  const auto unless_given = [&](const char* option, auto& field, auto value) {
    if (cmd.count(option) == 0) field = value;
  };
  if (o.recipe == "fast") {
    unless_given("--model", o.model, std::string("fast3x3"));
    unless_given("--batch-size", o.batch, 128);
    unless_given("--lr", o.lr, 0.003f);
    unless_given("--lr-schedule", o.lr_schedule, std::string("cosine"));
    unless_given("--epochs", o.epochs, 6);
  }
}

int run_train(const TrainOptions& given, const CLI::App& cmd) {
  using clock = std::chrono::steady_clock;
  RunTimings timings(process_start_time());
  timings.add("process start to main", timings.origin(), main_entered_time());
  const auto t_start = clock::now();
  timings.add("main to train (options)", main_entered_time(), t_start);
  TrainOptions o = given;
  apply_recipe(o, cmd);
  if (o.checkpoint_every > 0 && o.checkpoint.empty() && o.resume.empty())
    throw CLI::ValidationError("--checkpoint-every", "needs --checkpoint FILE to write to");
  if (o.lr_schedule == "cosine" && cmd.count("--lr-decay") > 0)
    throw CLI::ValidationError("--lr-decay",
                               "applies to --lr-schedule exp only (cosine runs "
                               "from --lr toward 0 over --epochs)");
  Checkpoint ckpt;
  if (!o.resume.empty()) {
    ckpt = load_checkpoint(o.resume);
    adopt_checkpoint(o, ckpt, cmd);
  } else {
    o.augment = augment_config(o.augment_given, cmd);
  }
  // Every output before anything is trained: a long run must not end in "cannot write".
  for (const auto& [option, path] : {std::pair{"--save", o.save}, {"--checkpoint", o.checkpoint},
                                     {"--log", o.log}, {"--plot", o.plot},
                                     {"--summary", o.summary}})
    if (!path.empty()) check_output_path(option, path);
  if (o.batch % o.gpus != 0)
    throw CLI::ValidationError("--batch-size", std::to_string(o.batch) + " does not split " +
                               "evenly over " + std::to_string(o.gpus) + " replicas (--gpus)");
  if (o.limit > 0 && o.limit < o.batch)
    throw CLI::ValidationError("--limit", "must be at least the batch size (" +
                               std::to_string(o.batch) + "), got " + std::to_string(o.limit));
  const bool resuming = !o.resume.empty();
  const ModelSpec spec = resuming ? ckpt.run.spec : load_spec(o.model);
  // The data are read, checked and measured on another thread while this one starts the
  // backend (a GPU context takes a few tenths of a second, longer than all of that). The
  // backend's error, if any, is still the one reported: the future's destructor waits for the
  // loader and drops whatever it threw.
  auto t = clock::now();
  const std::string cache_dir = o.no_data_cache ? "" : default_idx_cache_dir();
  std::future<PreparedData> loading = std::async(std::launch::async, [&] {
    return prepare_data(o, spec, resuming ? &ckpt : nullptr, cache_dir);
  });
  std::unique_ptr<Backend> first = open_backend(o.backend, o.threads);
  timings.add("backend creation (" + first->name() + ")", t, clock::now());
  check_gpus(o, *first);
  PreparedData prepared = loading.get();
  add_data_timings(timings, prepared.data, t, prepared.loaded);
  timings.add("data checks and statistics", prepared.loaded, prepared.done);
  DatasetPair& data = prepared.data;
  const Provenance& source = prepared.source;
  std::unique_ptr<Dataset>& val = prepared.val;
  const Normalization& norm = prepared.norm;
  t = clock::now();
  Replicas replicas = open_replicas(o, std::move(first), spec);
  Backend& be = *replicas.backends[0];
  Model& model = *replicas.models[0];
  be.synchronize();
  timings.add("model build + upload", t, clock::now());

  t = clock::now();
  const TrainConfig cfg = train_config(o);
  Trainer trainer(Replicas::pointers(replicas.backends), Replicas::pointers(replicas.models),
                  replicas.collective.get(), data.train, norm, cfg);
  be.synchronize();
  timings.add("trainer setup (data upload)", t, clock::now());
  if (resuming) {
    PCNN_CHECK(ckpt.steps_per_epoch == trainer.steps_per_epoch(),
               "checkpoint '" << o.resume << "' has " << ckpt.steps_per_epoch << " steps per "
                              << "epoch, the data give " << trainer.steps_per_epoch());
    trainer.restore(ckpt.state);
  } else {
    ckpt.run = run_settings(o, spec, cfg, norm);
    ckpt.data = source;
    ckpt.steps_per_epoch = trainer.steps_per_epoch();
  }
  ckpt.checkpoint_every = o.checkpoint_every;
  ckpt.backend = be.name();
  ckpt.threads = o.threads;

  ProgressDisplay display(choose_progress_style(o.quiet, o.progress_every), o.epochs,
                          o.progress_every);
  if (!o.quiet) {
    const std::string held = val ? format(" / %d validation", val->count) : std::string();
    display.print(format(
        "pcnn train: %s on %s (%d train%s / %d test images), backend %s [%s], "
        "batch %d, %s lr %g%s%s",
        spec.name.c_str(), data.source.c_str(), data.train.count, held.c_str(), data.test.count,
        be.name().c_str(), be.device_name().c_str(), o.batch, o.optimizer.c_str(),
        double(cfg.optimizer.lr), o.lr_schedule == "cosine" ? ", cosine schedule" : "",
        o.precision == "fp32" ? ""
                              : (", activations in " + o.precision +
                                 (o.precision == "fp16" ? " (dynamic loss scale)" : ""))
                                    .c_str()));
    if (o.augment.any())
      display.print("augmenting each training batch: " + augment_text(o.augment));
    if (replicas.collective)
      display.print(format("data parallel over %d replicas%s (%d images each per step), "
                           "all-reduce: %s", o.gpus, be.is_host_memory() ? " on the CPU" : "",
                           o.batch / o.gpus, replicas.collective->name().c_str()));
    display.print(model_summary(model) + format("%d steps of %d images per epoch",
                                                trainer.steps_per_epoch(), o.batch));
    if (resuming)
      display.print(format("resuming from %s at epoch %d, step %d", o.resume.c_str(),
                           ckpt.epoch() + 1, ckpt.step_in_epoch()));
  }
  install_stop_handlers();
  const EpochsResult result = train_epochs(o, trainer, be, model, data.test, val.get(), norm,
                                              display, ckpt);
  add_loop_timings(timings, result);
  const std::vector<LogRow>& rows = result.rows;
  if (!result.fault.empty()) {
    // The faulty update was skipped on the device, so the checkpoint holds the last good
    // parameters; the model is not saved: it is not the run that was asked for.
    std::string what = ": the update of that step was skipped; try a smaller --lr";
    if (!o.checkpoint.empty())
      what += "; checkpoint written to " + o.checkpoint + " (--resume " + o.checkpoint +
              " --on-nan skip trains past such steps)";
    std::fflush(stdout);
    std::fprintf(stderr, "pcnn train: error: %s%s\n", result.fault.c_str(), what.c_str());
    return kExitRuntimeError;
  }

  t = clock::now();
  if (!o.save.empty()) {
    save_trained_model(o.save, ckpt, source, rows, model.get_params(), model.get_state(),
                       data.train.class_names);
    if (!o.quiet && !result.interrupted) display.print("saved model to " + o.save);
  }
  if (!o.plot.empty()) {
    write_training_plot(o.plot, spec.name + " on " + be.name(), rows);
    if (!o.quiet && !result.interrupted) display.print("wrote training curves to " + o.plot);
  }
  if (result.interrupted) {
    std::string what;
    if (!o.checkpoint.empty()) what += "; checkpoint written to " + o.checkpoint;
    if (!o.save.empty()) what += "; model saved to " + o.save;
    if (!o.checkpoint.empty()) what += "; continue with --resume " + o.checkpoint;
    std::fflush(stdout);
    std::fprintf(stderr, "pcnn train: stopped by %s after step %lld of %lld%s\n",
                 stop_signal() == SIGTERM ? "SIGTERM" : "SIGINT",
                 static_cast<long long>(result.global_step),
                 static_cast<long long>(int64_t(o.epochs) * trainer.steps_per_epoch()),
                 what.c_str());
    return kExitInterrupted;
  }
  timings.add("writing outputs", t, clock::now());
  const double seconds = std::chrono::duration<double>(clock::now() - t_start).count();
  display.print(format("final test accuracy %.4f, %.1f s in all, peak memory %.0f MiB",
                       rows.back().test_accuracy, seconds, peak_rss_mib()));
  const std::string chance = chance_level_warning(rows.back(), spec.classes, data.test.count);
  if (!chance.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "pcnn train: warning: %s\n", chance.c_str());
  }
  const double whole = std::chrono::duration<double>(clock::now() - timings.origin()).count();
  const int64_t in_use = std::max(result.device_in_use, be.device_memory_in_use());
  if (!o.quiet) display.print(memory_line(be, spec, in_use, model.precision()));
  if (o.timings) display.print(timings_table(timings.phases(), whole));
  if (!o.summary.empty())
    write_run_summary(o.summary, rows.back(), whole, timings.phases(),
                      memory_json(be, spec, in_use, model.precision()));
  // A measuring aid for the time to accuracy: PCNN_EXIT_WITHOUT_TEARDOWN=1 ends the process here,
  // every file written and closed and stdout flushed, without freeing the device memory and
  // destroying the GPU context one by one (the driver reclaims them as the process ends), to
  // measure what that orderly teardown costs (~0.1 s of a 1 s run on the H200, session 15).
  if (const char* v = std::getenv("PCNN_EXIT_WITHOUT_TEARDOWN"); v && std::string(v) == "1") {
    std::fflush(nullptr);
    std::_Exit(kExitSuccess);
  }
  return kExitSuccess;
}
}  // namespace

Command add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  auto* sub = app.add_subcommand("train", "Train a model (default: LeNet-5 on Fashion-MNIST)");
  add_backend_option(*sub, o->backend);
  add_model_option(*sub, o->model);
  sub->add_option("--recipe", o->recipe,
                  "a documented set of options; fast: --model fast3x3 --batch-size 128 --lr 0.003 "
                  "--lr-schedule cosine --epochs 6 (91 % on Fashion-MNIST in 6 epochs); options "
                  "given as well take precedence")
      ->check(one_of({"fast"}, "recipe"));
  add_path_option(*sub, "--data,-d", o->data,
                  "data folder: MNIST-format files, CIFAR-10/100 binary files, or train/ and "
                  "test/ folders of images (default: Fashion-MNIST)");
  add_data_format_option(*sub, o->data_format);
  sub->add_option("--limit", o->limit,
                  "use only the first N images of the training set and the first N of the test "
                  "set (quick runs; before --val-split)")
      ->check(whole_number(1, kMaxImages));
  sub->add_option("--val-split", o->val_split,
                  "hold out this fraction of the training images (chosen by --seed) as a "
                  "validation set, evaluated after every epoch; in (0, 1)")
      ->check(real_number<double>({0, true, 1, true}));
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
  sub->add_option("--lr-decay", o->lr_decay, "learning rate factor per epoch (--lr-schedule exp)")
      ->check(real_number<float>(above(0)))
      ->capture_default_str();
  sub->add_option("--lr-schedule", o->lr_schedule,
                  "how the learning rate moves from epoch to epoch: exp (times --lr-decay after "
                  "each) or cosine (half a cosine from --lr toward 0 over --epochs)")
      ->check(one_of({"exp", "cosine"}, "learning-rate schedule"))
      ->capture_default_str();
  add_precision_option(*sub, o->precision,
                       "how activations and their gradients are stored between layers: fp32, "
                       "bf16 or fp16 (with a dynamic loss scale); weights, their gradients and "
                       "all sums stay fp32");
  sub->add_option("--seed", o->seed, "seed of weights and shuffling")
      ->check(whole_number(0, kMaxSeed))->capture_default_str();
  add_threads_option(*sub, o->threads, "CPU threads (0 = all cores)");
  add_path_option(*sub, "--save", o->save, "write the trained model to this file");
  add_path_option(*sub, "--log", o->log,
                  "write the training log here (CSV: a row per epoch, and per --log-every steps)");
  sub->add_option("--log-every", o->log_every,
                  "also log a row every N steps (loss, accuracy and speed over those steps)")
      ->check(whole_number(1, kMaxSteps));
  add_path_option(*sub, "--plot", o->plot, "write the training curves (SVG) to this file");
  sub->add_option("--progress-every", o->progress_every,
                  "a progress line every N steps (default: redrawn 4x a second on a terminal, "
                  "a line every 10 s otherwise)")->check(whole_number(1, kMaxSteps));
  sub->add_flag("--quiet,-q", o->quiet, "print only the epoch lines and the final line");
  sub->add_flag("--timings", o->timings,
                "at the end, a table of where the time went: start-up, each data file, the "
                "backend, model, first steps, training, evaluation, outputs");
  sub->add_flag("--no-data-cache", o->no_data_cache,
                "decode the IDX files again instead of reading the decoded copies kept in "
                "$PCNN_CACHE_DIR (default: ~/.cache/pcnn) by an earlier run");
  add_path_option(*sub, "--summary", o->summary,
                  "write the run summary here (JSON: final accuracy, process seconds, the "
                  "phase timings and memory)");
  sub->add_flag("--no-graphs", o->no_graphs, "do not replay the step as a CUDA graph");
  sub->add_option("--gpus", o->gpus, "data-parallel replicas, one per GPU (device 0..N-1)")
      ->check(whole_number(1, kMaxReplicas))->capture_default_str();
  sub->add_option("--collective", o->collective,
                  "all-reduce across replicas (default: nccl on cuda, else host)")
      ->check(one_of({"nccl", "host"}, "collective"));
  // Checkpoints and resuming (apps/pcnn/resume.hpp, models/checkpoint.hpp).
  sub->add_option("--checkpoint", o->checkpoint,
                  "write a checkpoint here at every epoch's end (and every --checkpoint-every "
                  "steps); also on SIGINT / SIGTERM");
  sub->add_option("--checkpoint-every", o->checkpoint_every,
                  "also write the checkpoint every N steps")->check(whole_number(1, kMaxSteps));
  sub->add_option("--resume", o->resume,
                  "continue the run saved in this checkpoint (its settings; --data, --save, "
                  "--log, --plot, --backend, --threads may be given)");
  // Numerical faults (train/trainer.hpp: NanPolicy).
  sub->add_option("--on-nan", o->on_nan,
                  "a step whose loss or gradients are not finite is never applied; stop: end "
                  "the run with exit code 1 (checkpoint written), naming the step and layer; "
                  "skip: train on, counting such steps")
      ->check(one_of({"stop", "skip"}, "policy"))->capture_default_str();
  add_augment_options(*sub, o->augment_given);
  return {sub, [o, sub] { return run_train(*o, *sub); }};
}

}  // namespace pcnn::cli
