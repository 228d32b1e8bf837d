// A labelled image set in host memory (uint8 pixels, as in the files), MNIST-style folders, and
// its device-resident copy for a backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace pcnn {

struct Dataset {
  int count = 0, height = 0, width = 0;
  std::vector<uint8_t> images;  // (count, height, width)
  std::vector<int32_t> labels;  // (count)
  int classes = 10;
};

struct DatasetPair {
  Dataset train, test;
  std::string source;  // folder it came from
};

// The default data set: Fashion-MNIST from Debian's dataset-fashion-mnist.
std::string default_data_dir();

// Loads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte (each optionally ending in .gz) from dir, checked for consistency.
DatasetPair load_mnist_folder(const std::string& dir);

// Builds a Dataset from an image file and a label file.
Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path);

// Mean and standard deviation of all pixels (as value/255), for normalisation.
void pixel_stats(const Dataset& d, float& mean, float& stddev);

// The data set as the backend sees it: uploaded once (host backends share the host memory).
class DeviceData {
 public:
  DeviceData(Backend& be, const Dataset& d, float mean, float inv_std);
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
