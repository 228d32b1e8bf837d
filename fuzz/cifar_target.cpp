// Fuzz target: the CIFAR-10/100 folder loader, on a folder whose record files and class-name file
// come from the input. Byte 0: bit 0 CIFAR-100 (2 label bytes, train.bin/test.bin), else CIFAR-10
// (data_batch_1..5.bin, test_batch.bin); bit 1 leaves the class-name file out. Byte 1: the length
// L of the class-name text that follows; the rest is one record file. The training files are
// symbolic links to the test file, so every set must come back as copies of its records.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/check.hpp"
#include "data/cifar.hpp"
#include "fuzz/targets.hpp"

namespace pcnn::fuzz {

namespace {
void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  require(f && std::fwrite(data, 1, size, f) == size, "cannot write " + path);
  std::fclose(f);
}

const char* const kCifar10Files[] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                     "data_batch_4.bin", "data_batch_5.bin", "batches.meta.txt",
                                     "test_batch.bin"};
const char* const kCifar100Files[] = {"train.bin", "fine_label_names.txt", "test.bin"};

// A folder of this process's own, made once, emptied before each input and removed at exit.
struct ScratchFolder {
  std::string dir = "/tmp/pcnn_fuzz_cifar_" + std::to_string(getpid());
  ScratchFolder() { mkdir(dir.c_str(), 0700); }
  ~ScratchFolder() {
    empty();
    rmdir(dir.c_str());
  }
  void empty() const {
    for (const char* f : kCifar10Files) std::remove((dir + "/" + f).c_str());
    for (const char* f : kCifar100Files) std::remove((dir + "/" + f).c_str());
  }
};

// Every record of the set is the record of the input it came from, label and pixels.
void check_copies(const Dataset& d, const uint8_t* records, size_t n, int label_bytes, int classes) {
  const size_t record = size_t(label_bytes) + kCifarPixels;
  require(d.channels == 3 && d.height == 32 && d.width == 32 && d.classes == classes,
          "a CIFAR set has the wrong shape");
  require(d.count >= 0 && size_t(d.count) % n == 0 && d.labels.size() == size_t(d.count) &&
              d.images.size() == size_t(d.count) * kCifarPixels,
          "a CIFAR set's counts disagree");
  require(d.class_names.empty() || int(d.class_names.size()) == classes,
          "a CIFAR set names other than its classes");
  for (size_t i = 0; i < size_t(d.count); ++i) {
    const uint8_t* r = records + (i % n) * record;
    require(d.labels[i] == r[label_bytes - 1] && d.labels[i] < classes,
            "a CIFAR label is not the file's");
    require(std::memcmp(d.images.data() + i * kCifarPixels, r + label_bytes, kCifarPixels) == 0,
            "CIFAR pixels are not the file's");
  }
}
}  // namespace

void cifar_target(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const bool hundred = data[0] & 1, names = !(data[0] & 2);
  const size_t name_bytes = std::min<size_t>(data[1], size - 2);
  const uint8_t* records = data + 2 + name_bytes;
  const size_t record_bytes = size - 2 - name_bytes;
  static const ScratchFolder scratch;
  scratch.empty();
  const std::string& dir = scratch.dir;
  const std::string test = dir + (hundred ? "/test.bin" : "/test_batch.bin");
  write_file(test, records, record_bytes);
  if (names)
    write_file(dir + (hundred ? "/fine_label_names.txt" : "/batches.meta.txt"), data + 2, name_bytes);
  if (hundred) {
    require(symlink(test.c_str(), (dir + "/train.bin").c_str()) == 0, "cannot link train.bin");
  } else {
    for (int b = 0; b < 5; ++b)
      require(symlink(test.c_str(), (dir + "/" + kCifar10Files[b]).c_str()) == 0,
              "cannot link a batch");
  }
  DatasetPair p;
  try {
    p = hundred ? load_cifar100_folder(dir) : load_cifar10_folder(dir);
  } catch (const Error&) {
    return;
  }
  const int label_bytes = hundred ? 2 : 1, classes = hundred ? 100 : 10;
  const size_t n = record_bytes / (size_t(label_bytes) + kCifarPixels);
  require(n >= 1 && size_t(p.test.count) == n && size_t(p.train.count) == (hundred ? n : 5 * n),
          "a CIFAR folder loaded another number of records than its files hold");
  require(p.classes == classes, "a CIFAR folder states another class count");
  check_copies(p.test, records, n, label_bytes, classes);
  check_copies(p.train, records, n, label_bytes, classes);
}

}  // namespace pcnn::fuzz
