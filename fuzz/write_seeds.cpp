// Writes the seed corpora of the fuzz targets into fuzz/corpus/ (run once; the files are
// committed): small IDX files cut from the real Fashion-MNIST test set and synthetic ones, the
// built-in model specs and a few custom ones as JSON, tiny saved models, small CIFAR folders (as
// the cifar target reads its input) and PNG and JPEG files of every kind the readers take.
//   pcnn_fuzz_seeds fuzz/corpus [fashion-mnist folder]
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/cifar.hpp"
#include "data/dataset.hpp"
#include "data/idx.hpp"
#include "models/model.hpp"
#include "models/serialize.hpp"
#ifdef PCNN_SEEDS_HAVE_IMAGES
#include "tests/image_writer.hpp"
#endif

namespace {
using pcnn::ModelSpec;

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
}

// An IDX file of the first n items of a (count, ...) array.
std::string idx_bytes(const std::vector<int>& dims, const uint8_t* values) {
  std::string b = {0, 0, 0x08, char(dims.size())};
  size_t n = 1;
  for (int d : dims) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(char(uint32_t(d) >> s));
    n *= size_t(d);
  }
  return b + std::string(reinterpret_cast<const char*>(values), n);
}

std::string gzipped(const std::string& raw) {
  const std::string tmp = "/tmp/pcnn_seed.gz";
  gzFile f = gzopen(tmp.c_str(), "wb9");
  gzwrite(f, raw.data(), unsigned(raw.size()));
  gzclose(f);
  std::ifstream in(tmp, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The idx target reads its first byte as the mode: 1 raw, 0 gzip the rest first.
void idx_seeds(const std::string& out, const std::string& data_dir) {
  const pcnn::Dataset t = pcnn::load_idx_pair(data_dir + "/t10k-images-idx3-ubyte.gz",
                                              data_dir + "/t10k-labels-idx1-ubyte.gz");
  const std::vector<uint8_t> labels(t.labels.begin(), t.labels.begin() + 3);
  const std::string images = idx_bytes({3, 28, 28}, t.images.data());
  const std::string label_file = idx_bytes({3}, labels.data());
  write(out + "/fashion_images_raw", "\x01" + images);
  write(out + "/fashion_images_gz_target", std::string(1, '\0') + images);
  write(out + "/fashion_images_gz_file", "\x01" + gzipped(images));
  write(out + "/fashion_labels_raw", "\x01" + label_file);
  write(out + "/fashion_labels_gz_file", "\x01" + gzipped(label_file));
  const uint8_t small[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
  write(out + "/rank2_raw", "\x01" + idx_bytes({4, 6}, small));
  write(out + "/rank4_raw", "\x01" + idx_bytes({2, 3, 2, 2}, small));
}

ModelSpec tiny_spec() {
  // conv 3x3 + ReLU + a stride-1 max-pool (the layer that once saved but did not load).
  return pcnn::model_spec_from_json(nlohmann::json::parse(R"({"name": "tiny", "input": [1, 6, 6],
    "classes": 3, "layers": [{"type": "conv", "units": 2, "kernel": 3, "pad": 1},
    {"type": "relu"}, {"type": "maxpool", "kernel": 2, "stride": 1}, {"type": "flatten"},
    {"type": "dense", "units": 3}]})"));
}

void spec_seeds(const std::string& out) {
  for (const std::string& name : pcnn::builtin_model_names()) {
    const ModelSpec s = pcnn::builtin_model(name);
    write(out + "/" + name + ".json", pcnn::to_json(s).dump(1));
    write(out + "/" + name + "_fused.json", pcnn::to_json(pcnn::fuse(s)).dump(1));
  }
  write(out + "/tiny.json", pcnn::to_json(tiny_spec()).dump(1));
  write(out + "/small_mix.json", R"({"name": "mix", "input": [2, 9, 7], "classes": 4, "layers": [
    {"type": "conv", "units": 3, "kernel": 2, "stride": 2, "pad": 1, "act": "tanh",
     "pool": "avgpool", "pool_window": 2, "pool_stride": 1},
    {"type": "sigmoid"}, {"type": "avgpool", "kernel": 2}, {"type": "dense", "units": 4, "act": "relu"}]})");
  // Edge geometry that the checks accept: the test suite runs these on every backend.
  const std::pair<const char*, const char*> edges[] = {
      {"pool_stride_past_window", R"([1, 9, 9], 3, [{"type": "maxpool", "kernel": 2, "stride": 3}])"},
      {"conv_stride_past_kernel", R"([3, 7, 5], 3, [{"type": "conv", "units": 2, "kernel": 2, "stride": 3, "pad": 1}])"},
      {"pad_kernel_minus_1", R"([1, 1, 1], 3, [{"type": "conv", "units": 2, "kernel": 3, "pad": 2}])"},
      {"window_is_the_input", R"([2, 5, 5], 3, [{"type": "avgpool", "kernel": 5}])"},
      {"fused_pool_whole_map", R"([1, 5, 5], 3, [{"type": "conv", "units": 2, "kernel": 3, "act": "relu",
          "pool": "maxpool", "pool_window": 3, "pool_stride": 7}])"},
      {"dense_on_maps", R"([2, 4, 3], 3, [{"type": "conv", "units": 2, "kernel": 2}, {"type": "dense", "units": 3}])"},
      {"conv_after_flatten", R"([2, 3, 3], 3, [{"type": "flatten"}, {"type": "conv", "units": 4, "kernel": 1}])"},
      {"one_class", R"([1, 4, 4], 1, [{"type": "maxpool", "kernel": 2, "stride": 1}])"},
      {"stacked_activations", R"([1, 6, 6], 3, [{"type": "relu"}, {"type": "tanh"}, {"type": "sigmoid"},
          {"type": "avgpool", "kernel": 3, "stride": 1}])"},
      {"strip_input", R"([1, 1, 40], 3, [{"type": "conv", "units": 3, "kernel": 1, "stride": 2}])"},
  };
  for (const auto& [name, body] : edges) {
    // "[input], classes, [layers]" -> a spec ending in flatten + dense of `classes` units.
    auto j = nlohmann::json::parse("[" + std::string(body) + "]");
    j = {{"name", name}, {"input", j[0]}, {"classes", j[1]}, {"layers", j[2]}};
    j["layers"].push_back({{"type", "flatten"}});
    j["layers"].push_back({{"type", "dense"}, {"units", j["classes"]}});
    pcnn::model_spec_from_json(j);  // each must be accepted
    write(out + "/edge_" + name + ".json", j.dump(1));
  }
}

void model_seeds(const std::string& out) {
  pcnn::SavedModel m;
  m.spec = tiny_spec();
  m.mean = 0.25f;
  m.inv_std = 2.5f;
  m.params = pcnn::initial_params(m.spec, 7);
  write(out + "/tiny_no_provenance.pcnn", pcnn::encode_model(m));
  m.provenance.data_folder = "/usr/share/datasets/fashion-mnist";
  m.provenance.data_files = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                             "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
  m.provenance.train_count = 60000;
  m.provenance.test_count = 10000;
  m.provenance.train_labels_crc32 = "0123abcd";
  m.provenance.test_labels_crc32 = "89ef4567";
  m.provenance.recipe = "adam lr 0.002 batch 64";
  m.provenance.epochs = 2;
  m.provenance.final_accuracy = 0.8125;
  write(out + "/tiny_provenance.pcnn", pcnn::encode_model(m));
}
// The cifar target's input: a mode byte (bit 0 CIFAR-100, bit 1 no name file), the length of the
// class-name text, the text, then records of smooth pixels.
void cifar_seeds(const std::string& out) {
  const auto records = [](int n, int label_bytes, int classes) {
    std::string r;
    for (int i = 0; i < n; ++i) {
      const int label = (i * 7 + 3) % classes;
      if (label_bytes == 2) r.push_back(char(label / 5));
      r.push_back(char(label));
      for (int p = 0; p < pcnn::kCifarPixels; ++p) r.push_back(char((p / 32 + p % 32 * 3 + i * 40) & 255));
    }
    return r;
  };
  const std::string names10 = "airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n";
  write(out + "/cifar10_named", std::string{0, char(names10.size())} + names10 + records(2, 1, 10));
  write(out + "/cifar10_unnamed", std::string{2, 0} + records(1, 1, 10));
  write(out + "/cifar100", std::string{3, 0} + records(3, 2, 100));
  const std::string few = "a\r\n\nb \n";  // CR, blank line, trailing space: two names, not 100
  write(out + "/cifar100_names", std::string{1, char(few.size())} + few + records(1, 2, 100));
}

#ifdef PCNN_SEEDS_HAVE_IMAGES
pcnn::Image seed_image(int channels, int height, int width, int levels) {
  pcnn::Image im;
  im.channels = channels;
  im.height = height;
  im.width = width;
  for (int c = 0; c < channels; ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        im.pixels.push_back(uint8_t((x * 3 + y * 5 + c * 70) % levels * (255 / (levels - 1))));
  return im;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void image_seeds(const std::string& out) {
  using pcnn::test::JpegOptions;
  using pcnn::test::PngOptions;
  const std::string tmp = "/tmp/pcnn_seed_image";
  const auto png = [&](const std::string& name, const pcnn::Image& im, const PngOptions& o) {
    pcnn::test::write_png(tmp, im, o);
    write(out + "/png/" + name, file_bytes(tmp));
  };
  png("grey.png", seed_image(1, 7, 5, 256), {});
  png("rgb.png", seed_image(3, 6, 9, 256), {});
  png("grey_alpha.png", seed_image(1, 4, 4, 256), {true, false, false});
  png("rgba.png", seed_image(3, 5, 3, 256), {true, false, false});
  png("rgb16.png", seed_image(3, 3, 4, 256), {false, true, false});
  png("palette.png", seed_image(3, 8, 8, 4), {false, false, true});
  const auto jpeg = [&](const std::string& name, const pcnn::Image& im, const JpegOptions& o) {
    pcnn::test::write_jpeg(tmp, im, o);
    write(out + "/jpeg/" + name, file_bytes(tmp));
  };
  jpeg("grey.jpg", seed_image(1, 9, 11, 256), {});
  jpeg("rgb420.jpg", seed_image(3, 17, 16, 256), {});
  jpeg("rgb444_q30.jpg", seed_image(3, 8, 8, 256), {30, false, 0, true});
  jpeg("progressive.jpg", seed_image(3, 16, 24, 256), {80, true, 0, false});
  jpeg("grey_progressive.jpg", seed_image(1, 10, 10, 256), {75, true, 0, false});
  jpeg("restarts.jpg", seed_image(3, 32, 8, 256), {90, false, 1, false});
  std::remove(tmp.c_str());
}
#endif
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [FASHION_MNIST_DIR]\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  idx_seeds(out + "/idx", argc > 2 ? argv[2] : pcnn::default_data_dir());
  spec_seeds(out + "/model_spec");
  model_seeds(out + "/model_file");
  cifar_seeds(out + "/cifar");
#ifdef PCNN_SEEDS_HAVE_IMAGES
  image_seeds(out);
#else
  std::fprintf(stderr, "no PNG or JPEG seeds: built without libpng or libjpeg\n");
#endif
  return 0;
}
