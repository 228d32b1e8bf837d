// Fuzz targets: the PNG and JPEG decoders (libpng, libjpeg) on the input as an image file held in
// memory, then the conversions a data set applies (channels, bilinear resize). Two programs over
// one check, so that each fuzzer's mutations start from seeds of its own format.
#include "core/check.hpp"
#include "data/image_file.hpp"
#include "fuzz/targets.hpp"

namespace pcnn::fuzz {

namespace {
void image_check(const uint8_t* data, size_t size) {
  Image im;
  try {
    im = decode_image(data, size, "fuzz input", kFuzzMaxImagePixels);
  } catch (const Error&) {
    return;
  }
  require(im.channels == 1 || im.channels == 3, "a decoded image has neither 1 nor 3 channels");
  require(im.height >= 1 && im.width >= 1 &&
              int64_t(im.height) * im.width <= kFuzzMaxImagePixels,
          "a decoded image's size is outside the limit");
  require(im.pixels.size() == size_t(im.channels) * im.height * im.width,
          "a decoded image's pixels disagree with its shape");
  // The other channel count at a small odd size, and back to the first at the decoded size.
  const Image small = convert_image(im, 4 - im.channels, 5, 3);
  require(small.pixels.size() == size_t(4 - im.channels) * 5 * 3, "a converted image has the wrong size");
  const Image same = convert_image(im, im.channels, im.height, im.width);
  require(same.pixels == im.pixels, "converting to an image's own shape changed it");
}
}  // namespace

void png_target(const uint8_t* data, size_t size) { image_check(data, size); }
void jpeg_target(const uint8_t* data, size_t size) { image_check(data, size); }

}  // namespace pcnn::fuzz
