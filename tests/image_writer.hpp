// Test-side writers of the files the data readers take: PNG, JPEG and CIFAR record files, so
// tests and tests/tools/make_data_sets.cpp build data sets of known content.
#pragma once

#include <string>

#include "data/dataset.hpp"
#include "data/image_file.hpp"

namespace pcnn::test {

// im: 1 or 3 channel planes. Throws Error when the file cannot be written.
void write_png(const std::string& path, const Image& im);
void write_jpeg(const std::string& path, const Image& im, int quality = 95);

// Image i of a data set.
Image image_of(const Dataset& d, int i);

// d's images (3x32x32) as CIFAR records: label_bytes 1 (CIFAR-10) or 2 (CIFAR-100: the coarse
// label written as label / 5, the fine one as the label).
void write_cifar_file(const std::string& path, const Dataset& d, int label_bytes);

}  // namespace pcnn::test
