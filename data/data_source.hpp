// Which reader a data folder needs: IDX (MNIST-style), CIFAR-10, CIFAR-100 or a folder of class
// sub-folders of images; detected from the files present unless the user names the format.
#pragma once

#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "data/image_folder.hpp"

namespace pcnn {

enum class DataFormat { Detect, Idx, Cifar10, Cifar100, Folder };

// The names --data-format takes: idx, cifar10, cifar100, folder.
const std::vector<std::string>& data_format_names();
// "" -> Detect; a name of data_format_names(); anything else throws Error.
DataFormat parse_data_format(const std::string& name);
std::string data_format_name(DataFormat f);  // Detect -> "detect"

// The format of dir's files: IDX names (train-images-idx3-ubyte[.gz]), CIFAR-10 names
// (data_batch_1.bin, test_batch.bin), CIFAR-100 names (train.bin, test.bin), or train/ and test/
// sub-folders, looked for in that order. Throws Error saying what was looked for.
DataFormat detect_data_format(const std::string& dir);

// Loads dir in the format given (Detect: detect_data_format). idx_classes bounds IDX labels
// (IDX files name no class count); shape is what a folder of images is converted to (the
// model's input); the other formats keep their own shape. idx_cache_dir: where decoded IDX
// files are cached ("" = none; data/idx_cache.hpp).
DatasetPair load_dataset(const std::string& dir, DataFormat format, const ImageShape& shape,
                         int idx_classes, const std::string& idx_cache_dir = "");

}  // namespace pcnn
