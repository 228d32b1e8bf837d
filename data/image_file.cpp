// PNG through libpng's simplified API (png_image), JPEG through libjpeg's decompressor with its
// fatal errors turned into a longjmp back to us; both decode from memory (the whole file read
// first) to interleaved pixels, which are then split into channel planes. Neither library may
// leave its state allocated or skip a C++ destructor when the input is bad: the fuzz targets
// (fuzz/image_targets.cpp) run these under ASan and UBSan.
#include "data/image_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <fstream>

#include "core/check.hpp"

#ifdef PCNN_HAVE_PNG
#include <png.h>
#endif
#ifdef PCNN_HAVE_JPEG
#include <jpeglib.h>
#endif

namespace pcnn {

namespace {
// Far above any image of kMaxImagePixels pixels worth reading: a larger file is refused unread.
constexpr uint64_t kMaxImageFile = uint64_t(1) << 30;

void check_size(const std::string& name, int64_t w, int64_t h, int64_t max_pixels) {
  PCNN_CHECK(w >= 1 && h >= 1 && w * h <= max_pixels,
             "'" << name << "' is a " << w << "x" << h << " image (at most " << max_pixels
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
// libpng's simplified API catches its own longjmp errors and returns 0 with image.message set;
// it frees its state on an error, and this guard frees it on every other way out (an exception
// from our checks or from allocating the pixels). png_image_free twice is harmless.
struct PngImage {
  png_image png{};
  PngImage() { png.version = PNG_IMAGE_VERSION; }
  ~PngImage() { png_image_free(&png); }
  PngImage(const PngImage&) = delete;
  PngImage& operator=(const PngImage&) = delete;
  Error error(const std::string& name, const char* what) const {
    return Error("'" + name + "' is not a readable PNG image (" +
                 (png.message[0] ? png.message : what) + ")");
  }
};

// libpng allocates what an ancillary chunk (sPLT, iCCP, text) says its length is before reading
// it, and the simplified API sets no cap on that (png_set_chunk_malloc_max needs the full API):
// the PNG fuzzer's 120-byte file whose sPLT chunk claims 1.9 GB ran it out of memory. A chunk
// cannot be longer than what is left of the file, so such a claim is refused here first.
void check_png_chunks(const PngImage& im, const uint8_t* data, size_t size,
                      const std::string& name) {
  const auto be32 = [](const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
  };
  for (size_t at = 8; size - at >= 8;) {  // past the signature: length, type, data, CRC
    const uint64_t length = be32(data + at), left = size - at - 8;
    std::string type(reinterpret_cast<const char*>(data + at + 4), 4);
    if (length + 4 > left) {
      // A chunk type is four ASCII letters; anything else (a newline, say) stays out of the line.
      for (char& c : type)
        if (!std::isalpha(static_cast<unsigned char>(c))) c = '?';
      const std::string what = "its " + type + " chunk claims " + std::to_string(length) +
                               " bytes, " + std::to_string(left) + " are left";
      throw im.error(name, what.c_str());
    }
    if (type == "IEND") return;
    at += 12 + length;
  }
}

Image decode_png(const uint8_t* data, size_t size, const std::string& name, int64_t max_pixels) {
  PngImage im;
  if (size >= 8) check_png_chunks(im, data, size, name);
  if (!png_image_begin_read_from_memory(&im.png, data, size)) throw im.error(name, "bad header");
  const int64_t w = im.png.width, h = im.png.height;
  check_size(name, w, h, max_pixels);
  const int channels = (im.png.format & PNG_FORMAT_FLAG_COLOR) ? 3 : 1;
  im.png.format = channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  std::vector<uint8_t> hwc(size_t(w * h * channels));
  if (!png_image_finish_read(&im.png, nullptr, hwc.data(), 0, nullptr))
    throw im.error(name, "bad data");
  return from_interleaved(hwc, channels, int(h), int(w));
}
#else
Image decode_png(const uint8_t*, size_t, const std::string& name, int64_t) {
  throw Error("'" + name + "' is a PNG image, and this pcnn was built without libpng "
              "(scripts/setup.sh installs libpng-dev)");
}
#endif

#ifdef PCNN_HAVE_JPEG
// A progressive JPEG may hold any number of scans, each a pass over the whole image: a few
// bytes per scan can make a small file take minutes. Real encoders write about 10.
constexpr int kMaxJpegScans = 1000;

// libjpeg calls error_exit on a fatal error and must not return: we jump back to the reader.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_fail(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

void jpeg_quiet(j_common_ptr, int) {}  // warnings (e.g. extraneous bytes) are not printed

// Called between work units: stops a file with too many scans through the error path.
void jpeg_count_scans(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxJpegScans) {
    auto* e = reinterpret_cast<JpegError*>(cinfo->err);
    std::snprintf(e->message, sizeof e->message, "more than %d scans", kMaxJpegScans);
    std::longjmp(e->jump, 1);
  }
}

// Everything with a destructor lives outside the setjmp frame (hwc is the caller's; the error
// is thrown after the jump, from the frame that called setjmp): longjmp skips destructors.
// cinfo and err, read after the jump, live in memory (their addresses went to libjpeg), never
// in registers that the jump would restore stale: libjpeg's own example.c relies on the same.
Image decode_jpeg(const uint8_t* data, size_t size, const std::string& name, int64_t max_pixels,
                  std::vector<uint8_t>& hwc) {
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  jpeg_progress_mgr progress{};
  progress.progress_monitor = jpeg_count_scans;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.emit_message = jpeg_quiet;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    throw Error("'" + name + "' is not a readable JPEG image (" + err.message + ")");
  }
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &progress;
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  const int channels = cinfo.num_components == 1 ? 1 : 3;
  cinfo.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  const int width = int(cinfo.image_width), height = int(cinfo.image_height);
  const bool too_large = width < 1 || height < 1 || int64_t(width) * height > max_pixels;
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
  check_size(name, width, height, max_pixels);
  return from_interleaved(hwc, channels, height, width);
}
#else
Image decode_jpeg(const uint8_t*, size_t, const std::string& name, int64_t,
                  std::vector<uint8_t>&) {
  throw Error("'" + name + "' is a JPEG image, and this pcnn was built without libjpeg "
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

Image decode_image(const uint8_t* data, size_t size, const std::string& name,
                   int64_t max_pixels) {
  static const uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (size >= 8 && std::equal(data, data + 8, kPngSignature))
    return decode_png(data, size, name, max_pixels);
  PCNN_CHECK(size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF,
             "'" << name << "' is neither a PNG nor a JPEG image");
  std::vector<uint8_t> hwc;
  return decode_jpeg(data, size, name, max_pixels, hwc);
}

Image read_image(const std::string& path) {
  struct stat st {};
  PCNN_CHECK(stat(path.c_str(), &st) == 0, "cannot open '" << path << "'");
  PCNN_CHECK(S_ISREG(st.st_mode), "'" << path << "' is not a regular file");
  PCNN_CHECK(uint64_t(st.st_size) <= kMaxImageFile,
             "'" << path << "' is " << st.st_size << " bytes, too large for an image file");
  std::ifstream in(path, std::ios::binary);
  PCNN_CHECK(in, "cannot open '" << path << "'");
  std::vector<uint8_t> bytes(size_t(st.st_size));
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
  PCNN_CHECK(in.gcount() == std::streamsize(bytes.size()), "cannot read '" << path << "'");
  return decode_image(bytes.data(), bytes.size(), path);
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
