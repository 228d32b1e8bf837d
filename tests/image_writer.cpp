// PNG through png_image_write_to_file, JPEG through libjpeg's compressor: both take interleaved
// pixels, so the planes are interleaved first.
#include "tests/image_writer.hpp"

#include <jpeglib.h>
#include <png.h>

#include <cstdio>
#include <fstream>

#include "core/check.hpp"

namespace pcnn::test {

namespace {
std::vector<uint8_t> interleaved(const Image& im) {
  const size_t plane = size_t(im.height) * im.width;
  std::vector<uint8_t> hwc(im.pixels.size());
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < im.channels; ++c) hwc[p * im.channels + c] = im.pixels[c * plane + p];
  return hwc;
}
}  // namespace

void write_png(const std::string& path, const Image& im) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = png_uint_32(im.width);
  png.height = png_uint_32(im.height);
  png.format = im.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  const std::vector<uint8_t> hwc = interleaved(im);
  PCNN_CHECK(png_image_write_to_file(&png, path.c_str(), 0, hwc.data(), 0, nullptr),
             "cannot write '" << path << "': " << png.message);
}

void write_jpeg(const std::string& path, const Image& im, int quality) {
  FILE* f = std::fopen(path.c_str(), "wb");
  PCNN_CHECK(f, "cannot write '" << path << "'");
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr err{};
  cinfo.err = jpeg_std_error(&err);  // a writer's error exits the test program: fine here
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, f);
  cinfo.image_width = JDIMENSION(im.width);
  cinfo.image_height = JDIMENSION(im.height);
  cinfo.input_components = im.channels;
  cinfo.in_color_space = im.channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<uint8_t> hwc = interleaved(im);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = hwc.data() + size_t(cinfo.next_scanline) * im.width * im.channels;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::fclose(f);
}

Image image_of(const Dataset& d, int i) {
  Image im;
  im.channels = d.channels;
  im.height = d.height;
  im.width = d.width;
  const auto from = d.images.begin() + std::ptrdiff_t(size_t(i) * d.image_size());
  im.pixels.assign(from, from + std::ptrdiff_t(d.image_size()));
  return im;
}

void write_cifar_file(const std::string& path, const Dataset& d, int label_bytes) {
  PCNN_CHECK(d.channels == 3 && d.height == 32 && d.width == 32, "CIFAR images are 3x32x32");
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < d.count; ++i) {
    const uint8_t label = uint8_t(d.labels[size_t(i)]);
    if (label_bytes == 2) out.put(char(label / 5));
    out.put(char(label));
    out.write(reinterpret_cast<const char*>(&d.images[size_t(i) * d.image_size()]),
              std::streamsize(d.image_size()));
  }
  PCNN_CHECK(out, "cannot write '" << path << "'");
}

}  // namespace pcnn::test
