// A labelled image set in host memory (uint8 pixels, as in the files), MNIST-style folders, and
// its device-resident copy for a backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "data/idx_files.hpp"

namespace pcnn {

// The whole set a part was cut from (keep_first, split_validation): what a trained model records
// as its data, so that `pcnn eval` on the whole folder finds the data it came from.
struct DatasetOrigin {
  int count = 0;              // 0: the set is whole (not cut)
  uint32_t labels_crc32 = 0;  // of all its labels
};

struct Dataset {
  int count = 0, height = 0, width = 0;
  std::vector<uint8_t> images;  // (count, channels, height, width)
  std::vector<int32_t> labels;  // (count)
  int classes = 10;             // labels lie in [0, classes)
  std::string images_file, labels_file;  // where they were read from
  int channels = 1;             // 1 (grey) .. kMaxDataChannels (3: RGB)
  std::vector<std::string> class_names;  // label -> name where the format has them (else empty)
  std::string source;           // the folder it was loaded from ("" = not from a folder)
  DatasetOrigin cut_from;       // set by the first cut

  // The whole set: cut_from once cut, else this set itself.
  DatasetOrigin origin() const;

  size_t image_size() const { return size_t(channels) * height * width; }

  // Throws Error naming the labels file and the first label outside [0, classes): a model with
  // fewer classes than the data would index its loss out of bounds.
  void check_labels(int classes) const;
  // zlib's crc32 of the labels (one byte each, as in the file): tells data sets apart.
  uint32_t labels_crc32() const;
};

struct DatasetPair {
  Dataset train, test;
  std::string source;  // folder it came from
  int classes = 0;     // the class count the format states (CIFAR, folders); 0: IDX, unstated
  std::vector<FileLoad> file_loads;  // when each file was read (IDX folders; for --timings)
  // Throws Error when the format states a class count other than a model's (classes).
  void check_classes(int model_classes, const std::string& model_name) const;
  void check_labels(int classes) const { train.check_labels(classes); test.check_labels(classes); }
};

// The default data set: Fashion-MNIST from Debian's dataset-fashion-mnist.
std::string default_data_dir();

// Loads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte (each optionally ending in .gz) from dir, checked for consistency and
// for labels in [0, classes).
// With a cache_dir, decoded files are kept there for the next run (data/idx_cache.hpp).
DatasetPair load_mnist_folder(const std::string& dir, int classes = 10,
                              const std::string& cache_dir = "");

// Builds a Dataset from an image file and a label file (labels in [0, classes)).
Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      int classes = 10);

// Mean and standard deviation of all pixels (as value/255), for normalisation.
void pixel_stats(const Dataset& d, float& mean, float& stddev);

// The input normalisation shared by training, evaluation and saved models:
// x = (pixel/255 - mean) * inv_std. Grey data sets use mean and inv_std alone; with several
// channels, channel_mean and channel_inv_std hold one value per channel (mean and inv_std then
// hold those of all pixels together, as a summary).
struct Normalization {
  Normalization() = default;
  Normalization(float m, float s, std::vector<float> cm = {}, std::vector<float> cs = {})
      : mean(m), inv_std(s), channel_mean(std::move(cm)), channel_inv_std(std::move(cs)) {}
  float mean = 0.f, inv_std = 1.f;
  std::vector<float> channel_mean, channel_inv_std;  // empty: every channel uses the above
  float mean_of(int c) const { return channel_mean.empty() ? mean : channel_mean.at(size_t(c)); }
  float inv_std_of(int c) const {
    return channel_inv_std.empty() ? inv_std : channel_inv_std.at(size_t(c));
  }
  // Throws Error unless every value is finite, every scale positive, and there are no
  // per-channel values or exactly `channels` of each (what: where they come from, for the message).
  void check(int channels, const std::string& what) const;
};

// Per-channel mean and 1/stddev of the pixels of d (as value/255); a grey set's channel
// vectors stay empty, so its normalisation is what pixel_stats gives.
Normalization normalization_of(const Dataset& d);

// The data set as the backend sees it: uploaded once (host backends share the host memory).
class DeviceData {
 public:
  DeviceData(Backend& be, const Dataset& d, const Normalization& norm);
  DeviceData(Backend& be, const Dataset& d, float mean, float inv_std)
      : DeviceData(be, d, Normalization(mean, inv_std)) {}  // grey
  ~DeviceData();
  DeviceData(const DeviceData&) = delete;
  DeviceData& operator=(const DeviceData&) = delete;
  const DeviceDataset& view() const { return view_; }

 private:
  Backend& be_;
  void* images_ = nullptr;  // owned device copies (null for host backends)
  void* labels_ = nullptr;
  DeviceDataset view_;
};

}  // namespace pcnn
