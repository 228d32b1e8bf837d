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

// The file variants a reader must also take (the fuzz seeds have one of each).
struct PngOptions {
  bool alpha = false;        // an alpha channel (grey + alpha, RGBA)
  bool sixteen_bit = false;  // 16-bit samples
  bool colormap = false;     // a palette (at most 256 distinct pixels)
};
void write_png(const std::string& path, const Image& im, const PngOptions& o);
struct JpegOptions {
  int quality = 95;
  bool progressive = false;
  int restart_rows = 0;      // a restart marker every this many MCU rows (0: none)
  bool full_chroma = false;  // colour planes at full resolution (4:4:4, not 4:2:0)
};
void write_jpeg(const std::string& path, const Image& im, const JpegOptions& o);

// Image i of a data set.
Image image_of(const Dataset& d, int i);

// d's images (3x32x32) as CIFAR records: label_bytes 1 (CIFAR-10) or 2 (CIFAR-100: the coarse
// label written as label / 5, the fine one as the label).
void write_cifar_file(const std::string& path, const Dataset& d, int label_bytes);

}  // namespace pcnn::test
