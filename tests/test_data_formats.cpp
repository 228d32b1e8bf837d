// The readers of data beyond MNIST: CIFAR records read back as written, hostile CIFAR files
// refused in one line, PNG/JPEG decoding and the conversions (channels, bilinear resize)
// against values worked out by hand, image folders (class order, interleaving, strictness),
// the validation split, the per-channel normalisation and its place in model files, and the
// api's loader and predict_files. (A colour data set training per backend:
// tests/test_rgb_training.cpp, which needs no image library.)
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "api/pcnn.hpp"
#include "data/cifar.hpp"
#include "data/data_source.hpp"
#include "data/image_file.hpp"
#include "data/image_folder.hpp"
#include "data/subset.hpp"
#include "models/model.hpp"
#include "models/serialize.hpp"
#include "tests/harness.hpp"
#include "tests/hostile_files.hpp"
#include "tests/image_writer.hpp"
#include "tests/synthetic.hpp"
#include "train/trainer.hpp"

namespace pcnn::test {

namespace {
std::string scratch_dir(const std::string& name) {
  const std::string d = scratch_path(name);
  mkdir(d.c_str(), 0755);
  return d;
}

Image make_image(int channels, int height, int width, uint64_t seed) {
  Image im;
  im.channels = channels;
  im.height = height;
  im.width = width;
  Rng r(seed);
  for (int i = 0; i < channels * height * width; ++i) im.pixels.push_back(uint8_t(r.next_u64()));
  return im;
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("CIFAR-10 and CIFAR-100 records read back as written, fine labels kept") {
  const Dataset d = synthetic_rgb_dataset(30, 32, 3);
  const std::string dir = scratch_dir("cifar10");
  for (int b = 1; b <= 5; ++b) write_cifar_file(dir + "/data_batch_" + std::to_string(b) + ".bin", d, 1);
  write_cifar_file(dir + "/test_batch.bin", d, 1);
  CHECK(detect_data_format(dir) == DataFormat::Cifar10);
  const DatasetPair p = load_dataset(dir, DataFormat::Detect, {}, 256);
  CHECK(p.classes == 10);
  REQUIRE(p.train.count == 150);
  CHECK(p.train.channels == 3);
  CHECK(std::equal(d.images.begin(), d.images.end(), p.train.images.begin() + 4 * d.images.size()));
  CHECK(p.test.images == d.images);
  CHECK(p.test.labels == d.labels);

  const std::string dir100 = scratch_dir("cifar100");
  write_cifar_file(dir100 + "/train.bin", d, 2);
  write_cifar_file(dir100 + "/test.bin", d, 2);
  CHECK(detect_data_format(dir100) == DataFormat::Cifar100);
  const DatasetPair q = load_cifar100_folder(dir100);
  CHECK(q.classes == 100);
  CHECK(q.train.labels == d.labels);  // the fine label, not label / 5
  CHECK(q.train.images == d.images);
}

TEST_CASE("CIFAR: truncated files, labels out of range and missing files are one-line errors") {
  const Dataset d = synthetic_rgb_dataset(4, 32, 5);
  const std::string p = scratch_path("c.bin");
  write_cifar_file(p, d, 1);
  std::string bytes = read_bytes(p);
  write_bytes(p, bytes.substr(0, bytes.size() - 1));
  PCNN_CHECK_REFUSED([&] { read_cifar_files({p}, 1, 10); }, p, "not a whole number of 3073-byte");
  write_bytes(p, "");
  PCNN_CHECK_REFUSED([&] { read_cifar_files({p}, 1, 10); }, p, "0 bytes");
  bytes[3073] = char(10);
  write_bytes(p, bytes);
  PCNN_CHECK_REFUSED([&] { read_cifar_files({p}, 1, 10); }, p, "label 10 (record 1)");
  // A CIFAR-10 file read as CIFAR-100 has the wrong record size.
  write_bytes(p, read_bytes(p).substr(0, 3073 * 2));
  PCNN_CHECK_REFUSED([&] { read_cifar_files({p}, 2, 100); }, p, "3074-byte");
  PCNN_CHECK_REFUSED([&] { load_cifar10_folder(scratch_path("none")); }, "has no data_batch_1.bin");
}

TEST_CASE("images: PNG and JPEG decode, grey and RGB, to channel planes") {
  const Image rgb = make_image(3, 5, 7, 1), grey = make_image(1, 6, 3, 2);
  const std::string a = scratch_path("a.png"), b = scratch_path("b.png"), c = scratch_path("c.jpg");
  write_png(a, rgb);
  write_png(b, grey);
  const Image ra = read_image(a), rb = read_image(b);
  CHECK(ra.channels == 3);
  CHECK(ra.height == 5);
  CHECK(ra.width == 7);
  CHECK(ra.pixels == rgb.pixels);  // lossless
  CHECK(rb.channels == 1);
  CHECK(rb.pixels == grey.pixels);
  // JPEG is lossy: a smooth image comes back close.
  Image smooth = rgb;
  smooth.height = smooth.width = 16;
  smooth.pixels.resize(3 * 256);
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 256; ++i) smooth.pixels[size_t(k * 256 + i)] = uint8_t(60 + 40 * k + (i % 16) * 4);
  write_jpeg(c, smooth, 100);
  const Image rc = read_image(c);
  REQUIRE(rc.pixels.size() == smooth.pixels.size());
  int worst = 0;
  for (size_t i = 0; i < rc.pixels.size(); ++i)
    worst = std::max(worst, std::abs(int(rc.pixels[i]) - int(smooth.pixels[i])));
  CHECK(worst <= 8);
  CHECK(has_image_extension("x.JPEG"));
  CHECK(!has_image_extension("png"));
}

TEST_CASE("images: corrupt and foreign files are refused naming the file") {
  const std::string p = scratch_path("bad.png");
  write_png(p, make_image(3, 20, 20, 4));
  const std::string bytes = read_bytes(p);
  write_bytes(p, bytes.substr(0, bytes.size() / 2));
  PCNN_CHECK_REFUSED([&] { read_image(p); }, p, "not a readable PNG");
  write_bytes(p, "GIF89a......");
  PCNN_CHECK_REFUSED([&] { read_image(p); }, p, "neither a PNG nor a JPEG");
  const std::string j = scratch_path("bad.jpg");
  write_jpeg(j, make_image(3, 20, 20, 5));
  write_bytes(j, read_bytes(j).substr(0, 200));
  PCNN_CHECK_REFUSED([&] { read_image(j); }, j, "not a readable JPEG");
  PCNN_CHECK_REFUSED([&] { read_image(scratch_path("none.png")); }, "cannot open");
  // A chunk longer than the file (the PNG fuzzer's finding, fuzz/regressions/png/: an sPLT
  // chunk of 1.9 GB in 120 bytes, which libpng allocated before reading).
  std::string big = bytes.substr(0, 33);  // signature and IHDR
  big += std::string("\x73\x73\x73\x73sPLT", 8) + std::string(40, 's');
  write_bytes(p, big);
  PCNN_CHECK_REFUSED([&] { read_image(p); }, p, "sPLT chunk claims 1936946035 bytes");
}

TEST_CASE("images: decoding bombs are refused before their cost (pixel limit, JPEG scans)") {
  const std::string p = scratch_path("limit.png"), j = scratch_path("scans.jpg");
  write_png(p, make_image(3, 5, 7, 8));
  const std::string png = read_bytes(p);
  const auto* png_data = reinterpret_cast<const uint8_t*>(png.data());
  CHECK(decode_image(png_data, png.size(), "x", 35).pixels.size() == 3u * 35);
  PCNN_CHECK_REFUSED([&] { decode_image(png_data, png.size(), "x", 34); }, "a 7x5 image (at most 34");
  // A progressive JPEG with its last scan repeated: 10 scans decode, 1001 are refused.
  JpegOptions o;
  o.progressive = true;
  write_jpeg(j, make_image(3, 16, 16, 9), o);
  const std::string jpeg = read_bytes(j);
  const size_t last = jpeg.rfind("\xFF\xDA"), end = jpeg.rfind("\xFF\xD9");
  REQUIRE(last != std::string::npos);
  REQUIRE(end == jpeg.size() - 2);
  const std::string scan = jpeg.substr(last, end - last);
  const auto with_scans = [&](int extra) {
    std::string b = jpeg.substr(0, end);
    for (int i = 0; i < extra; ++i) b += scan;
    return b + "\xFF\xD9";
  };
  const std::string some = with_scans(3), many = with_scans(1000);
  CHECK(decode_image(reinterpret_cast<const uint8_t*>(some.data()), some.size(), "x").height == 16);
  PCNN_CHECK_REFUSED([&] { decode_image(reinterpret_cast<const uint8_t*>(many.data()), many.size(), "m"); },
                     "'m' is not a readable JPEG image (more than 1000 scans)");
}

TEST_CASE("images: channel conversion and bilinear resize, against hand-worked values") {
  Image rgb;
  rgb.channels = 3;
  rgb.height = 1;
  rgb.width = 2;
  rgb.pixels = {100, 0, 0, 200, 10, 255};  // R plane, G plane, B plane
  const Image g = convert_image(rgb, 1, 1, 2);
  // 0.299*100 + 0.587*0 + 0.114*10 = 31.04; 0.587*200 + 0.114*255 = 146.47 (+0)
  CHECK(g.pixels == std::vector<uint8_t>{31, 146});
  const Image back = convert_image(g, 3, 1, 2);
  CHECK(back.pixels == std::vector<uint8_t>{31, 146, 31, 146, 31, 146});
  // 1x2 -> 1x4: centres at -0.25, 0.25, 0.75, 1.25 of the source: clamped, 1/4, 3/4, clamped.
  Image two;
  two.channels = 1;
  two.height = 1;
  two.width = 2;
  two.pixels = {0, 200};
  CHECK(convert_image(two, 1, 1, 4).pixels == std::vector<uint8_t>{0, 50, 150, 200});
  // 2x2 -> 1x1: the centre, the mean of all four.
  Image sq = two;
  sq.height = 2;
  sq.pixels = {0, 100, 100, 200};
  CHECK(convert_image(sq, 1, 1, 1).pixels == std::vector<uint8_t>{100});
}

TEST_CASE("image folders: sorted classes, images interleaved by class, strict contents") {
  const std::string dir = scratch_dir("folder");
  for (const char* set : {"train", "test"}) {
    const std::string s = dir + "/" + set;
    mkdir(s.c_str(), 0755);
    for (const char* cls : {"zebra", "ant", "mole"}) mkdir((s + "/" + cls).c_str(), 0755);
  }
  // ant: 2 images, mole: 1, zebra: 3 (one grey, one of another size, one JPEG).
  write_png(dir + "/train/ant/1.png", make_image(3, 8, 8, 1));
  write_png(dir + "/train/ant/2.png", make_image(3, 8, 8, 2));
  write_png(dir + "/train/mole/x.png", make_image(3, 8, 8, 3));
  write_png(dir + "/train/zebra/a.png", make_image(1, 8, 8, 4));
  write_png(dir + "/train/zebra/b.png", make_image(3, 12, 10, 5));
  write_jpeg(dir + "/train/zebra/c.jpg", make_image(3, 8, 8, 6));
  write_bytes(dir + "/train/zebra/.hidden", "skipped");
  for (const char* cls : {"ant", "mole", "zebra"})
    write_png(dir + "/test/" + cls + "/t.png", make_image(3, 8, 8, 7));
  CHECK(detect_data_format(dir) == DataFormat::Folder);
  const DatasetPair p = load_image_folder(dir, {3, 8, 8});
  CHECK(p.classes == 3);
  CHECK(p.train.class_names == std::vector<std::string>{"ant", "mole", "zebra"});
  CHECK(p.train.labels == std::vector<int32_t>{0, 1, 2, 0, 2, 2});  // in turns
  CHECK(p.train.images.size() == 6u * 3 * 8 * 8);
  const Image first(convert_image(read_image(dir + "/train/ant/1.png"), 3, 8, 8));
  CHECK(std::equal(first.pixels.begin(), first.pixels.end(), p.train.images.begin()));
  const DatasetPair grey = load_image_folder(dir, {1, 5, 5});  // converted to the model's input
  CHECK(grey.train.image_size() == 25u);

  write_bytes(dir + "/train/mole/notes.txt", "x");
  PCNN_CHECK_REFUSED([&] { load_image_folder(dir, {3, 8, 8}); }, "mole/notes.txt' is not an image");
  std::remove((dir + "/train/mole/notes.txt").c_str());
  write_bytes(dir + "/train/mole/y.png", "not a png at all");
  PCNN_CHECK_REFUSED([&] { load_image_folder(dir, {3, 8, 8}); }, "mole/y.png' is neither");
  std::remove((dir + "/train/mole/y.png").c_str());
  mkdir((dir + "/test/newt").c_str(), 0755);
  PCNN_CHECK_REFUSED([&] { load_image_folder(dir, {3, 8, 8}); }, "class folder 'newt'");
  rmdir((dir + "/test/newt").c_str());
  std::remove((dir + "/test/mole/t.png").c_str());
  PCNN_CHECK_REFUSED([&] { load_image_folder(dir, {3, 8, 8}); }, "test/mole' has no images");
}

TEST_CASE("validation split: seeded, disjoint, order kept, strict fractions") {
  Dataset d = synthetic_rgb_dataset(101, 8, 9);
  for (int i = 0; i < d.count; ++i) d.images[size_t(i) * d.image_size()] = uint8_t(i);  // an id
  const Dataset whole = d;
  Dataset a = d, b = d, c = d;
  const Dataset va = split_validation(a, 0.25, 7), vb = split_validation(b, 0.25, 7),
                vc = split_validation(c, 0.25, 8);
  CHECK(va.count == 25);
  CHECK(a.count == 76);
  CHECK(va.images == vb.images);  // same seed, same split
  CHECK(va.images != vc.images);  // another seed, another
  std::set<int> seen;
  for (const Dataset* s : {static_cast<const Dataset*>(&a), &va}) {
    int last = -1;
    for (int i = 0; i < s->count; ++i) {
      const int id = s->images[size_t(i) * s->image_size()];
      CHECK(id > last);  // in the original order
      last = id;
      seen.insert(id);
      CHECK(s->labels[size_t(i)] == whole.labels[size_t(id)]);
    }
  }
  CHECK(seen.size() == 101u);  // every image on exactly one side
  for (double f : {0.0, 1.0, -0.1, 0.001, 0.999}) {
    Dataset e = d;
    CHECK_THROWS_AS(split_validation(e, f, 1), Error);
  }
  Dataset e = d;
  keep_first(e, 10);
  CHECK(e.images.size() == 10 * e.image_size());
}

TEST_CASE("normalisation per channel: computed per plane, kept by model files, checked") {
  Dataset d;
  d.count = 2;
  d.channels = 3;
  d.height = 1;
  d.width = 2;
  d.images = {0, 255, 51, 51, 102, 102, /* image 1 */ 0, 255, 102, 102, 102, 102};
  d.labels = {0, 0};
  const Normalization n = normalization_of(d);
  REQUIRE(n.channel_mean.size() == 3u);
  CHECK(n.channel_mean[0] == doctest::Approx(0.5));
  CHECK(n.channel_inv_std[0] == doctest::Approx(2.0));
  CHECK(n.channel_mean[1] == doctest::Approx(0.3));
  CHECK(n.channel_mean[2] == doctest::Approx(0.4));

  SavedModel m;
  m.spec = model_spec_from_json(nlohmann::json::parse(R"({"name": "rgb", "input": [3, 1, 2],
      "classes": 2, "layers": [{"type": "dense", "units": 2}]})"));
  m.params = initial_params(m.spec, 11);
  m.set_normalization(n);
  m.class_names = {"a", "b"};
  const SavedModel back = decode_model(encode_model(m), "m");
  CHECK(back.channel_mean == n.channel_mean);
  CHECK(back.channel_inv_std == n.channel_inv_std);
  CHECK(back.class_names == m.class_names);
  SavedModel grey = m;  // one value for all channels: no per-channel metadata needed
  grey.channel_mean.clear();
  grey.channel_inv_std.clear();
  CHECK(decode_model(encode_model(grey), "g").channel_mean.empty());
  SavedModel wrong = m;
  wrong.channel_mean.pop_back();
  wrong.channel_inv_std.pop_back();
  PCNN_CHECK_REFUSED([&] { decode_model(encode_model(wrong), "w"); }, "2 channel means");
  wrong = m;
  wrong.class_names.push_back("c");
  PCNN_CHECK_REFUSED([&] { decode_model(encode_model(wrong), "w"); }, "names 3 classes");
}

TEST_CASE("api: load_data reads a folder of images; the network keeps its class names and "
          "predicts image files as it predicts the same images in memory") {
  const std::string dir = scratch_dir("api_folder");
  Dataset d = synthetic_rgb_dataset(60, 16, 31);
  for (int i = 0; i < d.count; ++i) d.labels[size_t(i)] = i % 10;  // every class in both sets
  for (const char* set : {"train", "test"}) {
    mkdir((dir + "/" + set).c_str(), 0755);
    for (int c = 0; c < 10; ++c) mkdir((dir + "/" + set + "/k" + std::to_string(c)).c_str(), 0755);
  }
  std::vector<std::string> files;
  for (int i = 0; i < d.count; ++i) {
    const std::string f = dir + (i < 40 ? "/train/k" : "/test/k") +
                          std::to_string(d.labels[size_t(i)]) + "/" + std::to_string(i) + ".png";
    write_png(f, image_of(d, i));
    if (i >= 40) files.push_back(f);
  }
  const ModelSpec spec = api::NetworkBuilder("rgb16", 3, 16, 16).conv(4, 3, 1, 1, "relu")
                             .maxpool(2).dense(10).spec();
  const DatasetPair p = api::load_data(dir, spec, "", 0);
  CHECK(p.train.count == 40);
  CHECK(p.train.channels == 3);
  api::Network net(spec, backend_name(), 3);
  api::TrainOptions o;
  o.epochs = 1;
  o.batch = 8;
  o.progress_every_s = 0;
  net.train(p.train, &p.test, o);
  CHECK(net.class_names().size() == 10u);
  const std::string saved = scratch_path("api_folder.pcnn");
  net.save(saved);
  api::Network back = api::Network::load(saved, backend_name());
  CHECK(back.class_names() == net.class_names());
  const std::vector<api::Prediction> from_files = back.predict_files(files);
  REQUIRE(from_files.size() == files.size());
  // The same images in memory: images 40.. of d, which the files hold exactly (PNG is lossless).
  Dataset mem;
  mem.channels = 3;
  mem.height = mem.width = 16;
  mem.count = 20;
  mem.images.assign(d.images.begin() + std::ptrdiff_t(40 * d.image_size()), d.images.end());
  const std::vector<api::Prediction> from_memory = back.predict(mem);
  for (size_t i = 0; i < files.size(); ++i) {
    CHECK(from_files[i].label == from_memory[i].label);
    CHECK(from_files[i].probabilities == from_memory[i].probabilities);
  }
  PCNN_CHECK_REFUSED([&] { api::load_data(dir, builtin_model("lenet5"), "cifar10"); },
                     "has no data_batch_1.bin");
}

}  // TEST_SUITE

}  // namespace pcnn::test
