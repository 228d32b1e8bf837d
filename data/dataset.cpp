// MNIST-style folders and the device-resident copy of a data set.
#include "data/dataset.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "data/idx.hpp"

namespace pcnn {

namespace {
bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string find_member(const std::string& dir, const std::string& stem) {
  for (const char* suffix : {"", ".gz"}) {
    const std::string p = dir + "/" + stem + suffix;
    if (file_exists(p)) return p;
  }
  throw Error("data folder '" + dir + "' has no " + stem + " (nor " + stem + ".gz)");
}
}  // namespace

std::string default_data_dir() { return "/usr/share/datasets/fashion-mnist"; }

void Dataset::check_labels(int n) const {
  for (size_t i = 0; i < labels.size(); ++i)
    PCNN_CHECK(labels[i] >= 0 && labels[i] < n,
               "'" << labels_file << "' has label " << labels[i] << " (item " << i
                   << "), outside the " << n << " classes 0.." << n - 1);
}

uint32_t Dataset::labels_crc32() const {
  const std::vector<uint8_t> bytes(labels.begin(), labels.end());
  return uint32_t(crc32_z(crc32_z(0, nullptr, 0), bytes.data(), bytes.size()));
}

Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      int classes) {
  IdxArray im = read_idx(images_path);
  IdxArray lb = read_idx(labels_path);
  PCNN_CHECK(im.dims.size() == 3, "'" << images_path << "' is not an image file (rank "
                                      << im.dims.size() << ", expected 3)");
  PCNN_CHECK(lb.dims.size() == 1, "'" << labels_path << "' is not a label file (rank "
                                      << lb.dims.size() << ", expected 1)");
  PCNN_CHECK(im.dims[0] == lb.dims[0], "'" << images_path << "' has " << im.dims[0]
                                           << " images but '" << labels_path << "' has "
                                           << lb.dims[0] << " labels");
  Dataset d;
  d.count = im.dims[0];
  d.height = im.dims[1];
  d.width = im.dims[2];
  d.images = std::move(im.data);
  d.labels.assign(lb.data.begin(), lb.data.end());
  d.images_file = images_path;
  d.labels_file = labels_path;
  d.classes = classes;
  d.check_labels(classes);
  return d;
}

DatasetPair load_mnist_folder(const std::string& dir, int classes) {
  DatasetPair p;
  p.source = dir;
  p.train = load_idx_pair(find_member(dir, "train-images-idx3-ubyte"),
                          find_member(dir, "train-labels-idx1-ubyte"), classes);
  p.test = load_idx_pair(find_member(dir, "t10k-images-idx3-ubyte"),
                         find_member(dir, "t10k-labels-idx1-ubyte"), classes);
  PCNN_CHECK(p.train.height == p.test.height && p.train.width == p.test.width,
             "training images are " << p.train.height << "x" << p.train.width
                                    << " but test images are " << p.test.height << "x"
                                    << p.test.width);
  return p;
}

void pixel_stats(const Dataset& d, float& mean, float& stddev) {
  double sum = 0, sq = 0;
  for (uint8_t v : d.images) {
    const double x = v / 255.0;
    sum += x;
    sq += x * x;
  }
  const double n = double(d.images.size());
  mean = float(sum / n);
  stddev = float(std::sqrt(std::max(1e-12, sq / n - (sum / n) * (sum / n))));
}

DeviceData::DeviceData(Backend& be, const Dataset& d, float mean, float inv_std) : be_(be) {
  view_.count = d.count;
  view_.height = d.height;
  view_.width = d.width;
  view_.mean = mean;
  view_.inv_std = inv_std;
  if (be.is_host_memory()) {  // no second copy of the pixels on a CPU backend
    view_.images = d.images.data();
    view_.labels = d.labels.data();
    return;
  }
  images_ = be.allocate(d.images.size());
  labels_ = be.allocate(d.labels.size() * sizeof(int32_t));
  be.upload(images_, d.images.data(), d.images.size());
  be.upload(labels_, d.labels.data(), d.labels.size() * sizeof(int32_t));
  view_.images = static_cast<const uint8_t*>(images_);
  view_.labels = static_cast<const int32_t*>(labels_);
}

DeviceData::~DeviceData() {
  be_.deallocate(images_);
  be_.deallocate(labels_);
}

}  // namespace pcnn
