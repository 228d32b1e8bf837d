// Single image files (PNG through libpng, JPEG through libjpeg-turbo), decoded to uint8 channel
// planes, and the two conversions a data set's images may need: to the model's channels (grey
// <-> RGB) and to its height and width (bilinear).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pcnn {

struct Image {
  int channels = 0, height = 0, width = 0;
  std::vector<uint8_t> pixels;  // (channels, height, width): one plane per channel
};

// The most pixels one image may have (a 16384 x 16384 photo): a larger header is refused
// before anything is allocated.
constexpr int64_t kMaxImagePixels = int64_t(1) << 28;

// Reads a PNG or JPEG file, told apart by its first bytes (not its name): grey images (with or
// without alpha) give 1 channel, colour ones 3; alpha is dropped, 16-bit samples are reduced to
// 8 bits, palettes expanded. Throws Error naming the file for anything else (a corrupt or
// truncated image, another format).
Image read_image(const std::string& path);

// What read_image does once the file is in memory; name stands for the file in errors.
// max_pixels below kMaxImagePixels: the fuzz targets keep every input quick.
Image decode_image(const uint8_t* data, size_t size, const std::string& name,
                   int64_t max_pixels = kMaxImagePixels);

// true when the name ends in .png, .jpg or .jpeg (any case).
bool has_image_extension(const std::string& name);

// The image with `channels` channels (1 <-> 3: grey copied to R, G and B; RGB to grey by the
// luma weights 0.299, 0.587, 0.114) and height x width pixels (bilinear, pixel centres aligned;
// unchanged when the size already matches).
Image convert_image(const Image& im, int channels, int height, int width);

}  // namespace pcnn
