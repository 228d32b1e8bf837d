// Format names, detection from the files present, and the dispatch to each reader.
#include "data/data_source.hpp"

#include <sys/stat.h>

#include "core/check.hpp"
#include "data/cifar.hpp"

namespace pcnn {

namespace {
bool is_file(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
}  // namespace

const std::vector<std::string>& data_format_names() {
  static const std::vector<std::string> names = {"idx", "cifar10", "cifar100", "folder"};
  return names;
}

DataFormat parse_data_format(const std::string& name) {
  if (name.empty()) return DataFormat::Detect;
  const DataFormat formats[] = {DataFormat::Idx, DataFormat::Cifar10, DataFormat::Cifar100,
                                DataFormat::Folder};
  for (DataFormat f : formats)
    if (data_format_name(f) == name) return f;
  throw Error("unknown data format '" + name + "' (known: idx, cifar10, cifar100, folder)");
}

std::string data_format_name(DataFormat f) {
  switch (f) {
    case DataFormat::Idx: return "idx";
    case DataFormat::Cifar10: return "cifar10";
    case DataFormat::Cifar100: return "cifar100";
    case DataFormat::Folder: return "folder";
    case DataFormat::Detect: break;
  }
  return "detect";
}

DataFormat detect_data_format(const std::string& dir) {
  struct stat st {};
  PCNN_CHECK(stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode),
             "data folder '" << dir << "' is missing or not a folder");
  for (const char* suffix : {"", ".gz"})
    if (is_file(dir + "/train-images-idx3-ubyte" + suffix)) return DataFormat::Idx;
  if (looks_like_cifar10(dir)) return DataFormat::Cifar10;
  if (looks_like_cifar100(dir)) return DataFormat::Cifar100;
  if (looks_like_image_folder(dir)) return DataFormat::Folder;
  throw Error("cannot tell the format of data folder '" + dir + "': it has no "
              "train-images-idx3-ubyte[.gz] (idx), data_batch_1.bin (cifar10), train.bin "
              "(cifar100), nor train/ and test/ sub-folders (folder)");
}

DatasetPair load_dataset(const std::string& dir, DataFormat format, const ImageShape& shape,
                         int idx_classes, const std::string& idx_cache_dir) {
  if (format == DataFormat::Detect) format = detect_data_format(dir);
  switch (format) {
    case DataFormat::Idx: return load_mnist_folder(dir, idx_classes, idx_cache_dir);
    case DataFormat::Cifar10: return load_cifar10_folder(dir);
    case DataFormat::Cifar100: return load_cifar100_folder(dir);
    case DataFormat::Folder: return load_image_folder(dir, shape);
    case DataFormat::Detect: break;
  }
  throw Error("no data format");
}

}  // namespace pcnn
