// The small, stable API for programs that use ParallelCNN as a library (installed as
// <pcnn/pcnn.hpp>): open a backend by name, build a network from a built-in name, a JSON spec or
// in code, train it with a progress callback, evaluate, predict, save and load. It wraps the
// registry, Model, Trainer, the data readers and saved models; the classes under it stay usable
// for anything this does not cover. Errors are thrown as pcnn::Error with one readable line.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "data/dataset.hpp"
#include "models/model_spec.hpp"
#include "train/trainer.hpp"

namespace pcnn::api {

// The backends compiled into this library, fastest first, and whether each can run here.
struct BackendInfo {
  std::string name;
  bool usable = false;
  std::string why_not;  // empty when usable
};
std::vector<BackendInfo> backends();

// A built-in model name (lenet5, simard2003, mlp, fast3x3) or a path ending in .json.
ModelSpec model_spec(const std::string& name_or_json_path);

// A network in code: the input shape, then layers in order; the last dense layer's units are
// the classes. Activation names are those of specs: relu, tanh, sigmoid, elu ("none": linear).
class NetworkBuilder {
 public:
  NetworkBuilder(std::string name, int channels, int height, int width);
  NetworkBuilder& conv(int maps, int kernel, int stride = 1, int pad = 0,
                       const std::string& activation = "none");
  NetworkBuilder& maxpool(int window, int stride = 0);  // stride 0: the window
  NetworkBuilder& avgpool(int window, int stride = 0);
  NetworkBuilder& flatten();
  NetworkBuilder& dense(int units, const std::string& activation = "none");
  NetworkBuilder& activation(const std::string& name);
  NetworkBuilder& dropout(double rate = 0.5);  // inverted dropout while training
  NetworkBuilder& global_avgpool();           // (C,H,W) -> (C,1,1)
  // Pad the last layer, a maxpool or avgpool: pad < window, padded positions never read.
  NetworkBuilder& pad(int pad);
  // The spec, checked (check_spec): an impossible shape is an Error naming the layer.
  ModelSpec spec() const;

 private:
  ModelSpec spec_;
};

struct TrainOptions {
  int epochs = 1;
  int batch = 64;
  uint32_t seed = 1;               // initial weights (fresh networks) and the shuffle
  std::string optimizer = "adam";  // adam | sgd
  float learning_rate = 2e-3f;
  float momentum = 0.9f;           // sgd only
  float lr_decay = 0.75f;          // the learning rate is multiplied by this after every epoch
  bool cosine_schedule = false;    // instead: half a cosine from learning_rate toward 0 over epochs
  double progress_every_s = 1.0;   // how often on_progress is called (0: never by time)
  int progress_every_steps = 0;    // ... and every this many steps (0: never by count)
  AugmentConfig augment;           // on the device, training batches only (none by default)
  // Storage of activations and their gradients between layers (core/precision.hpp): fp32, bf16
  // or fp16 (with a dynamic loss scale). The network keeps it for evaluation and prediction
  // until it is trained again in another.
  Precision precision = Precision::F32;
};

// Where training stands, as passed to the progress callback.
struct Progress {
  int epoch = 0, epochs = 0;  // 1-based
  int step = 0, steps = 0;    // steps done in this epoch, steps per epoch
  double loss = 0;            // mean loss of this epoch's steps so far
  double accuracy = 0;        // fraction of this epoch's training images classified right
  double seconds = 0;         // since this epoch began
};
using ProgressFn = std::function<void(const Progress&)>;
// Called after each epoch (test_accuracy and test_loss are 0 without a test set).
using EpochFn = std::function<void(const EpochStats&)>;

struct Prediction {
  int label = 0;                     // the most probable class
  std::vector<float> probabilities;  // softmax over the classes
};

// A model on a backend, with the input normalisation it was trained with.
class Network {
 public:
  // A fresh network (weights drawn from seed) on the backend named ("" = the fastest usable
  // here); threads: CPU worker threads (0 = all cores).
  Network(const ModelSpec& spec, const std::string& backend = "", uint64_t seed = 1,
          int threads = 0);
  // A network saved by save() or by `pcnn train --save`.
  static Network load(const std::string& path, const std::string& backend = "", int threads = 0);
  Network(Network&&) noexcept;
  Network& operator=(Network&&) noexcept;
  ~Network();

  // Trains on train (labels in [0, classes)); with a test set, evaluates on it after every epoch.
  // A fresh network takes its input normalisation from the first training set it sees. Each
  // call starts the optimizer's state and the learning-rate schedule anew.
  std::vector<EpochStats> train(const Dataset& train, const Dataset* test,
                                const TrainOptions& options, const ProgressFn& on_progress = {},
                                const EpochFn& on_epoch = {});
  EvalResult evaluate(const Dataset& data);
  // count images of channels x height x width uint8 pixels, image after image, each one plane
  // per channel (R, G, B), each plane row-major: the layout of a Dataset and of CIFAR records.
  // channels must be the model's input channels (an Error says so otherwise); images smaller
  // than the model's input are padded as in training (28x28 into simard2003's 29x29).
  std::vector<Prediction> predict(const uint8_t* images, int count, int channels, int height,
                                  int width);
  // Grey images (channels 1), row-major as in IDX files.
  std::vector<Prediction> predict(const uint8_t* images, int count, int height, int width);
  Prediction predict(const uint8_t* image, int height, int width);
  std::vector<Prediction> predict(const Dataset& images);  // its labels are not read
  // PNG or JPEG files, each converted to the model's input (channels, then a bilinear resize
  // to its height and width), as a folder data set's images are.
  std::vector<Prediction> predict_files(const std::vector<std::string>& paths);
  // Written atomically: the old file or the new one, never half of one.
  void save(const std::string& path) const;

  const ModelSpec& spec() const;  // as given (unfused)
  std::string backend_name() const;
  std::string device_name() const;
  size_t parameter_count() const;
  // The training set's class names, label order (from a saved model or the last train() call;
  // empty when its data had none, as IDX files do).
  const std::vector<std::string>& class_names() const;

 private:
  struct State;
  explicit Network(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

// The four MNIST-format files of a folder (train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-..., each optionally .gz), labels checked against classes; limit > 0 keeps only the first
// limit images of each set (quick runs).
DatasetPair load_mnist(const std::string& dir, int limit = 0, int classes = 10);

// Images without labels from one IDX file (e.g. t10k-images-idx3-ubyte[.gz]), for predict().
Dataset read_images(const std::string& idx_path);

// Any data folder pcnn train reads: IDX files, CIFAR-10/100 binary files, or train/ and test/
// folders of PNG/JPEG images (converted to spec's input shape). format: "" detects it, else
// idx, cifar10, cifar100 or folder. Labels are checked against spec.classes; limit > 0 keeps
// only the first limit images of each set.
DatasetPair load_data(const std::string& dir, const ModelSpec& spec, const std::string& format = "",
                      int limit = 0);

// PNG or JPEG files as unlabelled images of the given shape (channels 1 or 3).
Dataset read_image_files(const std::vector<std::string>& paths, int channels, int height,
                         int width);

}  // namespace pcnn::api
