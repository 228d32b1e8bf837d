// Writes small learnable colour data sets for the command-line tests (tests/cli_data_formats.sh):
//   make_data_sets cifar10 DIR TRAIN TEST    data_batch_1..5.bin + test_batch.bin + batches.meta.txt
//   make_data_sets cifar100 DIR TRAIN TEST   train.bin + test.bin (labels 0..9 of the 100)
//   make_data_sets folder DIR TRAIN TEST     train/ and test/ with class folders c0..c9 of PNG
//                                            images, every fifth of them grey, and one JPEG
// TRAIN and TEST count images; the classes are tests/synthetic.hpp's coloured bars, 32x32.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "core/check.hpp"
#include "tests/image_writer.hpp"
#include "tests/synthetic.hpp"

using namespace pcnn;

namespace {
void make_dir(const std::string& p) {
  if (mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) throw Error("cannot make '" + p + "'");
}

// Rows first..first+n-1 of d.
Dataset part(const Dataset& d, int first, int n) {
  Dataset p = d;
  p.count = n;
  p.images.assign(d.images.begin() + std::ptrdiff_t(first * d.image_size()),
                  d.images.begin() + std::ptrdiff_t((first + n) * d.image_size()));
  p.labels.assign(d.labels.begin() + first, d.labels.begin() + first + n);
  return p;
}

void write_folder(const std::string& dir, const Dataset& d) {
  make_dir(dir);
  for (int c = 0; c < 10; ++c) make_dir(dir + "/c" + std::to_string(c));
  for (int i = 0; i < d.count; ++i) {
    const std::string stem = dir + "/c" + std::to_string(d.labels[size_t(i)]) + "/" +
                             std::to_string(1000 + i);
    Image im = test::image_of(d, i);
    if (i == 0) {  // one JPEG, at high quality so that it keeps its class
      test::write_jpeg(stem + ".jpg", im, 98);
      continue;
    }
    if (i % 5 == 1) im = convert_image(im, 1, im.height, im.width);  // some grey ones
    if (i % 7 == 2) im = convert_image(im, im.channels, 40, 36);     // some of another size
    test::write_png(stem + ".png", im);
  }
}
}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc != 5) {
      std::fprintf(stderr, "usage: make_data_sets cifar10|cifar100|folder DIR TRAIN TEST\n");
      return 2;
    }
    const std::string kind = argv[1], dir = argv[2];
    const int train = std::stoi(argv[3]), test = std::stoi(argv[4]);
    const Dataset all = test::synthetic_rgb_dataset(train + test, 32, 77);
    const Dataset tr = part(all, 0, train), te = part(all, train, test);
    make_dir(dir);
    if (kind == "cifar10") {
      const int per = train / 5;  // the last batch takes the remainder
      for (int b = 0; b < 5; ++b)
        test::write_cifar_file(dir + "/data_batch_" + std::to_string(b + 1) + ".bin",
                               part(tr, b * per, b == 4 ? train - 4 * per : per), 1);
      test::write_cifar_file(dir + "/test_batch.bin", te, 1);
      FILE* f = std::fopen((dir + "/batches.meta.txt").c_str(), "w");
      for (const char* n : {"red0", "red1", "red2", "red3", "red4", "cyan5", "cyan6", "cyan7",
                            "cyan8", "cyan9"})
        std::fprintf(f, "%s\n", n);
      std::fclose(f);
    } else if (kind == "cifar100") {
      test::write_cifar_file(dir + "/train.bin", tr, 2);
      test::write_cifar_file(dir + "/test.bin", te, 2);
    } else if (kind == "folder") {
      write_folder(dir + "/train", tr);
      write_folder(dir + "/test", te);
    } else {
      std::fprintf(stderr, "make_data_sets: unknown kind '%s'\n", kind.c_str());
      return 2;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_data_sets: %s\n", e.what());
    return 1;
  }
}
