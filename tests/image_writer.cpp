// PNG through png_image_write_to_file, JPEG through libjpeg's compressor: both take interleaved
// pixels, so the planes are interleaved first.
#include "tests/image_writer.hpp"

#include <jpeglib.h>
#include <png.h>

#include <algorithm>
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

void write_png(const std::string& path, const Image& im) { write_png(path, im, PngOptions{}); }

void write_png(const std::string& path, const Image& im, const PngOptions& o) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = png_uint_32(im.width);
  png.height = png_uint_32(im.height);
  png.format = im.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  std::vector<uint8_t> hwc = interleaved(im);
  const size_t plane = size_t(im.height) * im.width;
  if (o.alpha) {  // one more sample per pixel, opaque to clear across the image
    png.format |= PNG_FORMAT_FLAG_ALPHA;
    std::vector<uint8_t> with(plane * (im.channels + 1));
    for (size_t p = 0; p < plane; ++p) {
      std::copy_n(&hwc[p * im.channels], im.channels, &with[p * (im.channels + 1)]);
      with[p * (im.channels + 1) + im.channels] = uint8_t(255 - p * 255 / plane);
    }
    hwc.swap(with);
  }
  const int samples = PNG_IMAGE_SAMPLE_CHANNELS(png.format);
  std::vector<uint8_t> colormap;
  if (o.colormap) {  // every distinct pixel one entry (at most 256), the pixels become indices
    std::vector<uint8_t> index(plane);
    for (size_t p = 0; p < plane; ++p) {
      const uint8_t* px = &hwc[p * samples];
      size_t k = 0;
      while (k * samples < colormap.size() && !std::equal(px, px + samples, &colormap[k * samples])) ++k;
      if (k * samples == colormap.size()) colormap.insert(colormap.end(), px, px + samples);
      PCNN_CHECK(k < 256, "write_png: more than 256 colours for a colour-mapped file");
      index[p] = uint8_t(k);
    }
    png.colormap_entries = png_uint_32(colormap.size() / samples);
    png.format |= PNG_FORMAT_FLAG_COLORMAP;
    hwc.swap(index);
  }
  if (o.sixteen_bit) {  // linear 16-bit samples: libpng writes a 16-bit file
    PCNN_CHECK(!o.colormap, "write_png: a colour-mapped file has 8-bit entries");
    png.format |= PNG_FORMAT_FLAG_LINEAR;
    std::vector<uint16_t> wide(hwc.size());
    for (size_t i = 0; i < hwc.size(); ++i) wide[i] = uint16_t(hwc[i] * 257);
    PCNN_CHECK(png_image_write_to_file(&png, path.c_str(), 0, wide.data(), 0, nullptr),
               "cannot write '" << path << "': " << png.message);
    return;
  }
  PCNN_CHECK(png_image_write_to_file(&png, path.c_str(), 0, hwc.data(), 0,
                                     colormap.empty() ? nullptr : colormap.data()),
             "cannot write '" << path << "': " << png.message);
}

void write_jpeg(const std::string& path, const Image& im, int quality) {
  JpegOptions o;
  o.quality = quality;
  write_jpeg(path, im, o);
}

void write_jpeg(const std::string& path, const Image& im, const JpegOptions& o) {
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
  jpeg_set_quality(&cinfo, o.quality, TRUE);
  if (o.progressive) jpeg_simple_progression(&cinfo);
  cinfo.restart_in_rows = o.restart_rows;
  if (o.full_chroma && im.channels == 3)
    for (int c = 0; c < 3; ++c) cinfo.comp_info[c].h_samp_factor = cinfo.comp_info[c].v_samp_factor = 1;
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
