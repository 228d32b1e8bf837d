// PNG through libpng's simplified API (png_image), JPEG through libjpeg's decompressor with its
// fatal errors turned into a longjmp back to us; both decode interleaved pixels, which are then
// split into channel planes.
#include "data/image_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <memory>

#include "core/check.hpp"

#ifdef PCNN_HAVE_PNG
#include <png.h>
#endif
#ifdef PCNN_HAVE_JPEG
#include <jpeglib.h>
#endif

namespace pcnn {

namespace {
struct FileClose {
  void operator()(FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileClose>;

void check_size(const std::string& path, int64_t w, int64_t h) {
  PCNN_CHECK(w >= 1 && h >= 1 && w * h <= kMaxImagePixels,
             "'" << path << "' is a " << w << "x" << h << " image (at most " << kMaxImagePixels
                 << " pixels)");
}

// Interleaved (H, W, C) -> planes (C, H, W).
Image from_interleaved(const std::vector<uint8_t>& hwc, int channels, int height, int width) {
  Image im;
  im.channels = channels;
  im.height = height;
  im.width = width;
  im.pixels.resize(hwc.size());
  const size_t plane = size_t(height) * width;
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < channels; ++c) im.pixels[c * plane + p] = hwc[p * channels + c];
  return im;
}

#ifdef PCNN_HAVE_PNG
Image read_png(const std::string& path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  const auto fail = [&](const char* what) -> Error {
    const std::string msg = png.message[0] ? png.message : what;
    png_image_free(&png);
    return Error("'" + path + "' is not a readable PNG image (" + msg + ")");
  };
  if (!png_image_begin_read_from_file(&png, path.c_str())) throw fail("bad header");
  const int64_t w = png.width, h = png.height;
  if (w < 1 || h < 1 || w * h > kMaxImagePixels) {
    png_image_free(&png);
    check_size(path, w, h);
  }
  const int channels = (png.format & PNG_FORMAT_FLAG_COLOR) ? 3 : 1;
  png.format = channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  std::vector<uint8_t> hwc(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, hwc.data(), 0, nullptr)) throw fail("bad data");
  png_image_free(&png);
  return from_interleaved(hwc, channels, int(h), int(w));
}
#else
Image read_png(const std::string& path) {
  throw Error("'" + path + "' is a PNG image, and this pcnn was built without libpng "
              "(scripts/setup.sh installs libpng-dev)");
}
#endif

#ifdef PCNN_HAVE_JPEG
// libjpeg calls error_exit on a fatal error and must not return: we jump back to the reader.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_fail(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

void jpeg_quiet(j_common_ptr, int) {}  // warnings (e.g. extraneous bytes) are not printed

// Everything with a destructor lives outside the setjmp frame: longjmp skips destructors.
Image read_jpeg(const std::string& path, FILE* f, std::vector<uint8_t>& hwc) {
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.emit_message = jpeg_quiet;
  int width = 0, height = 0, channels = 0;
  bool too_large = false;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    throw Error("'" + path + "' is not a readable JPEG image (" + err.message + ")");
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f);
  jpeg_read_header(&cinfo, TRUE);
  channels = cinfo.num_components == 1 ? 1 : 3;
  cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  width = int(cinfo.image_width);
  height = int(cinfo.image_height);
  too_large = int64_t(width) * height > kMaxImagePixels || width < 1 || height < 1;
  if (!too_large) {
    jpeg_start_decompress(&cinfo);
    hwc.resize(size_t(width) * height * channels);
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = hwc.data() + size_t(cinfo.output_scanline) * width * channels;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  check_size(path, width, height);
  return from_interleaved(hwc, channels, height, width);
}
#else
Image read_jpeg(const std::string& path, FILE*, std::vector<uint8_t>&) {
  throw Error("'" + path + "' is a JPEG image, and this pcnn was built without libjpeg "
              "(scripts/setup.sh installs libjpeg-dev)");
}
#endif
}  // namespace

bool has_image_extension(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  for (const char* ext : {".png", ".jpg", ".jpeg"}) {
    const std::string e = ext;
    if (lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0)
      return true;
  }
  return false;
}

Image read_image(const std::string& path) {
  struct stat st {};
  PCNN_CHECK(stat(path.c_str(), &st) == 0, "cannot open '" << path << "'");
  PCNN_CHECK(S_ISREG(st.st_mode), "'" << path << "' is not a regular file");
  File f(std::fopen(path.c_str(), "rb"));
  PCNN_CHECK(f, "cannot open '" << path << "'");
  unsigned char magic[8] = {};
  const size_t got = std::fread(magic, 1, sizeof magic, f.get());
  static const unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (got == 8 && std::equal(magic, magic + 8, kPngSignature)) {
    f.reset();
    return read_png(path);
  }
  PCNN_CHECK(got >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF,
             "'" << path << "' is neither a PNG nor a JPEG image");
  std::rewind(f.get());
  std::vector<uint8_t> hwc;
  return read_jpeg(path, f.get(), hwc);
}

Image convert_image(const Image& im, int channels, int height, int width) {
  PCNN_CHECK((channels == 1 || channels == 3) && height >= 1 && width >= 1,
             "cannot convert images to " << channels << "x" << height << "x" << width
                                         << " (1 or 3 channels)");
  const size_t plane = size_t(im.height) * im.width;
  // Channels first, at the source size.
  Image c;
  c.channels = channels;
  c.height = im.height;
  c.width = im.width;
  if (im.channels == channels) {
    c.pixels = im.pixels;
  } else if (channels == 3) {  // grey -> RGB
    c.pixels.resize(3 * plane);
    for (int k = 0; k < 3; ++k)
      std::copy(im.pixels.begin(), im.pixels.begin() + std::ptrdiff_t(plane),
                c.pixels.begin() + std::ptrdiff_t(k * plane));
  } else {  // RGB -> grey
    c.pixels.resize(plane);
    for (size_t p = 0; p < plane; ++p)
      c.pixels[p] = uint8_t(std::lround(0.299 * im.pixels[p] + 0.587 * im.pixels[plane + p] +
                                        0.114 * im.pixels[2 * plane + p]));
  }
  if (im.height == height && im.width == width) return c;
  // Bilinear: output pixel (y, x) samples the source at its centre, ((y + 0.5) * H/h - 0.5),
  // clamped to the edge pixels.
  Image out;
  out.channels = channels;
  out.height = height;
  out.width = width;
  out.pixels.resize(size_t(channels) * height * width);
  const double sy = double(im.height) / height, sx = double(im.width) / width;
  for (int y = 0; y < height; ++y) {
    const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, double(im.height - 1));
    const int y0 = int(fy), y1 = std::min(y0 + 1, im.height - 1);
    const double wy = fy - y0;
    for (int x = 0; x < width; ++x) {
      const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, double(im.width - 1));
      const int x0 = int(fx), x1 = std::min(x0 + 1, im.width - 1);
      const double wx = fx - x0;
      for (int k = 0; k < channels; ++k) {
        const uint8_t* p = c.pixels.data() + size_t(k) * plane;
        const double top = p[y0 * im.width + x0] * (1 - wx) + p[y0 * im.width + x1] * wx;
        const double bottom = p[y1 * im.width + x0] * (1 - wx) + p[y1 * im.width + x1] * wx;
        out.pixels[(size_t(k) * height + y) * width + x] =
            uint8_t(std::lround(top * (1 - wy) + bottom * wy));
      }
    }
  }
  return out;
}

}  // namespace pcnn
