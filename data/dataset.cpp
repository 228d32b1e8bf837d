// MNIST-style folders and the device-resident copy of a data set.
#include "data/dataset.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "data/idx.hpp"
#include "data/idx_files.hpp"

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

void DatasetPair::check_classes(int model_classes, const std::string& model_name) const {
  PCNN_CHECK(classes == 0 || classes == model_classes,
             "the data set has " << classes << " classes, model '" << model_name << "' has "
                                 << model_classes << " (its spec's \"classes\" and last layer)");
}

DatasetOrigin Dataset::origin() const {
  return cut_from.count > 0 ? cut_from : DatasetOrigin{count, labels_crc32()};
}

uint32_t Dataset::labels_crc32() const {
  const std::vector<uint8_t> bytes(labels.begin(), labels.end());
  return uint32_t(crc32_z(crc32_z(0, nullptr, 0), bytes.data(), bytes.size()));
}

namespace {
// An image file and its label file, read, made one Dataset and checked.
Dataset idx_pair(IdxArray im, IdxArray lb, const std::string& images_path,
                 const std::string& labels_path, int classes) {
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
}  // namespace

Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path,
                      int classes) {
  IdxArray im = read_idx(images_path);
  IdxArray lb = read_idx(labels_path);
  return idx_pair(std::move(im), std::move(lb), images_path, labels_path, classes);
}

DatasetPair load_mnist_folder(const std::string& dir, int classes, const std::string& cache_dir) {
  DatasetPair p;
  p.source = dir;
  // All four found (in this order) before any is read; then read at once, the large training
  // images beside the rest (data/idx_files.hpp: which error wins does not depend on timing).
  std::vector<std::string> paths;
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    paths.push_back(find_member(dir, stem));
  std::vector<IdxArray> a = read_idx_files(paths, &p.file_loads, cache_dir);
  p.train = idx_pair(std::move(a[0]), std::move(a[1]), paths[0], paths[1], classes);
  p.test = idx_pair(std::move(a[2]), std::move(a[3]), paths[2], paths[3], classes);
  PCNN_CHECK(p.train.height == p.test.height && p.train.width == p.test.width,
             "training images are " << p.train.height << "x" << p.train.width
                                    << " but test images are " << p.test.height << "x"
                                    << p.test.width);
  p.train.source = p.test.source = dir;
  return p;
}

namespace {
// Pixel sums from a histogram of byte values: one pass of counting, then exact integer sums
// (a pass of double additions over 47 million Fashion-MNIST pixels took 0.1 s of start-up).
struct PixelSums {
  double count = 0, mean = 0, mean_sq = 0;  // of value/255
};

PixelSums pixel_sums(const Dataset& d, int channel) {
  // Four histograms, so that runs of equal pixels (the black background) do not queue on one
  // counter.
  uint32_t hist[4][256] = {};  // each plane is counted into 32 bits, then added to 64
  uint64_t total[256] = {};
  const size_t plane = size_t(d.height) * d.width;
  const int first = channel < 0 ? 0 : channel, last = channel < 0 ? d.channels - 1 : channel;
  for (int i = 0; i < d.count; ++i)
    for (int c = first; c <= last; ++c) {
      const uint8_t* p = d.images.data() + (size_t(i) * d.channels + c) * plane;
      size_t k = 0;
      for (; k + 4 <= plane; k += 4) {
        ++hist[0][p[k]];
        ++hist[1][p[k + 1]];
        ++hist[2][p[k + 2]];
        ++hist[3][p[k + 3]];
      }
      for (; k < plane; ++k) ++hist[0][p[k]];
      if (plane > (1u << 20) || i % 1024 == 1023 || i + 1 == d.count) {  // before 2^32 counts
        for (int v = 0; v < 256; ++v) {
          total[v] += uint64_t(hist[0][v]) + hist[1][v] + hist[2][v] + hist[3][v];
          hist[0][v] = hist[1][v] = hist[2][v] = hist[3][v] = 0;
        }
      }
    }
  uint64_t n = 0, sum = 0, sq = 0;  // 2^30 pixels * 255^2 fits 64 bits
  for (uint64_t v = 0; v < 256; ++v) {
    n += total[v];
    sum += total[v] * v;
    sq += total[v] * v * v;
  }
  PixelSums s;
  s.count = double(n);
  if (n == 0) return s;
  s.mean = double(sum) / 255.0 / s.count;
  s.mean_sq = double(sq) / (255.0 * 255.0) / s.count;
  return s;
}

double stddev_of(const PixelSums& s) {
  return std::sqrt(std::max(1e-12, s.mean_sq - s.mean * s.mean));
}
}  // namespace

void pixel_stats(const Dataset& d, float& mean, float& stddev) {
  const PixelSums s = pixel_sums(d, -1);
  mean = float(s.mean);
  stddev = float(stddev_of(s));
}

void Normalization::check(int channels, const std::string& what) const {
  PCNN_CHECK(std::isfinite(mean), what << " has no finite input mean ('mean')");
  PCNN_CHECK(std::isfinite(inv_std) && inv_std > 0,
             what << " has 'inv_std' " << inv_std << ": the input scale must be a positive number");
  PCNN_CHECK(channel_mean.size() == channel_inv_std.size() &&
                 (channel_mean.empty() || int(channel_mean.size()) == channels),
             what << " has " << channel_mean.size() << " channel means and "
                  << channel_inv_std.size() << " channel scales for " << channels
                  << " input channels");
  for (size_t c = 0; c < channel_mean.size(); ++c) {
    PCNN_CHECK(std::isfinite(channel_mean[c]),
               what << " has a channel mean that is not finite (channel " << c << ")");
    PCNN_CHECK(std::isfinite(channel_inv_std[c]) && channel_inv_std[c] > 0,
               what << " has channel scale " << channel_inv_std[c] << " (channel " << c
                    << "): it must be a positive number");
  }
}

Normalization normalization_of(const Dataset& d) {
  Normalization n;
  float stddev = 1.f;
  pixel_stats(d, n.mean, stddev);
  n.inv_std = 1.f / stddev;
  if (d.channels == 1) return n;
  for (int c = 0; c < d.channels; ++c) {
    const PixelSums s = pixel_sums(d, c);
    n.channel_mean.push_back(float(s.mean));
    n.channel_inv_std.push_back(float(1.0 / stddev_of(s)));
  }
  return n;
}

DeviceData::DeviceData(Backend& be, const Dataset& d, const Normalization& norm) : be_(be) {
  PCNN_CHECK(d.channels >= 1 && d.channels <= kMaxDataChannels,
             "the data set has " << d.channels << " channels (1 to " << kMaxDataChannels
                                 << " supported)");
  norm.check(d.channels, "the input normalisation");
  view_.count = d.count;
  view_.height = d.height;
  view_.width = d.width;
  view_.channels = d.channels;
  for (int c = 0; c < d.channels; ++c) {
    view_.mean[c] = norm.mean_of(c);
    view_.inv_std[c] = norm.inv_std_of(c);
  }
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
