// CIFAR binary records: whole files read and checked, then split into labels and pixels.
#include "data/cifar.hpp"

#include <sys/stat.h>

#include <fstream>

#include "core/check.hpp"
#include "core/checked_math.hpp"

namespace pcnn {

namespace {
// Far above the largest CIFAR file (CIFAR-100's train.bin, 154 MB): a larger one is not CIFAR.
constexpr uint64_t kMaxCifarFile = uint64_t(1) << 30;

bool is_file(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string member(const std::string& dir, const std::string& name) {
  const std::string p = dir + "/" + name;
  PCNN_CHECK(is_file(p), "CIFAR folder '" << dir << "' has no " << name);
  return p;
}

// Appends the records of one file to d.
void read_records(const std::string& path, int label_bytes, int classes, Dataset& d) {
  struct stat st {};
  PCNN_CHECK(stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode), "cannot open '" << path << "'");
  const uint64_t size = uint64_t(st.st_size);
  const uint64_t record = uint64_t(label_bytes) + kCifarPixels;
  PCNN_CHECK(size > 0 && size <= kMaxCifarFile,
             "'" << path << "' is " << size << " bytes, not a CIFAR file");
  PCNN_CHECK(size % record == 0, "'" << path << "' is " << size << " bytes, not a whole number of "
                                     << record << "-byte CIFAR records (truncated or not "
                                     << (label_bytes == 1 ? "CIFAR-10" : "CIFAR-100") << ")");
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size_t(size), '\0');
  in.read(&bytes[0], std::streamsize(size));
  PCNN_CHECK(in.gcount() == std::streamsize(size), "cannot read '" << path << "'");
  const size_t n = size_t(size / record);
  PCNN_CHECK(uint64_t(d.count) + n <= uint64_t(kMaxElements), "too many CIFAR images");
  d.images.reserve(d.images.size() + n * kCifarPixels);
  for (size_t i = 0; i < n; ++i) {
    const auto* r = reinterpret_cast<const uint8_t*>(bytes.data()) + i * record;
    const int label = r[label_bytes - 1];  // CIFAR-100: the fine label, after the coarse one
    PCNN_CHECK(label < classes, "'" << path << "' has label " << label << " (record " << i
                                    << "), outside the " << classes << " classes 0.."
                                    << classes - 1);
    d.labels.push_back(label);
    d.images.insert(d.images.end(), r + label_bytes, r + record);
  }
  d.count += int(n);
}

// One name per line (blank lines skipped), or nothing when the file is absent or does not name
// exactly `classes` classes.
std::vector<std::string> class_names(const std::string& path, int classes) {
  std::ifstream in(path);
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) names.push_back(line);
  }
  if (int(names.size()) != classes) return {};
  return names;
}

DatasetPair load_pair(const std::string& dir, const std::vector<std::string>& train,
                      const std::string& test, int label_bytes, int classes,
                      const std::string& names_file) {
  DatasetPair p;
  p.source = dir;
  std::vector<std::string> train_paths;
  for (const std::string& f : train) train_paths.push_back(member(dir, f));
  p.train = read_cifar_files(train_paths, label_bytes, classes);
  p.test = read_cifar_files({member(dir, test)}, label_bytes, classes);
  p.train.class_names = p.test.class_names = class_names(dir + "/" + names_file, classes);
  p.train.source = p.test.source = dir;
  p.classes = classes;
  return p;
}
}  // namespace

Dataset read_cifar_files(const std::vector<std::string>& files, int label_bytes, int classes) {
  Dataset d;
  d.channels = kCifarChannels;
  d.height = d.width = kCifarSide;
  d.classes = classes;
  for (const std::string& f : files) read_records(f, label_bytes, classes, d);
  d.images_file = d.labels_file = files.empty() ? "" : files.front();
  return d;
}

DatasetPair load_cifar10_folder(const std::string& dir) {
  return load_pair(dir, {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                         "data_batch_4.bin", "data_batch_5.bin"},
                   "test_batch.bin", 1, 10, "batches.meta.txt");
}

DatasetPair load_cifar100_folder(const std::string& dir) {
  return load_pair(dir, {"train.bin"}, "test.bin", 2, 100, "fine_label_names.txt");
}

bool looks_like_cifar10(const std::string& dir) {
  return is_file(dir + "/data_batch_1.bin") || is_file(dir + "/test_batch.bin");
}

bool looks_like_cifar100(const std::string& dir) {
  return is_file(dir + "/train.bin") || is_file(dir + "/test.bin");
}

}  // namespace pcnn
