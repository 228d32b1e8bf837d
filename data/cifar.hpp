// Reader of the CIFAR-10 and CIFAR-100 binary versions (https://www.cs.toronto.edu/~kriz/cifar.html):
// fixed-size records of label byte(s) then 3x32x32 pixels, channel planes R, G, B, each row-major:
// exactly the (C,H,W) layout a Dataset holds. Every file is checked whole before use: its size a
// multiple of the record, every label in range; an error names the file.
#pragma once

#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace pcnn {

constexpr int kCifarSide = 32, kCifarChannels = 3;
constexpr int kCifarPixels = kCifarChannels * kCifarSide * kCifarSide;  // 3072

// One or more record files read into one set. label_bytes: 1 (CIFAR-10) or 2 (CIFAR-100: coarse
// then fine; the fine label is kept). Labels must lie in [0, classes).
Dataset read_cifar_files(const std::vector<std::string>& files, int label_bytes, int classes);

// CIFAR-10: data_batch_1.bin .. data_batch_5.bin and test_batch.bin from dir (10 classes; names
// from batches.meta.txt where present).
DatasetPair load_cifar10_folder(const std::string& dir);
// CIFAR-100: train.bin and test.bin from dir (the 100 fine labels; names from
// fine_label_names.txt where present).
DatasetPair load_cifar100_folder(const std::string& dir);

// The files that mark a folder as CIFAR-10 or CIFAR-100 (format detection).
bool looks_like_cifar10(const std::string& dir);
bool looks_like_cifar100(const std::string& dir);

}  // namespace pcnn
