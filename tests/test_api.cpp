// The public facade (api/pcnn.hpp) on the backend under test: a network built in code trains,
// reports progress, predicts what evaluate() counts, and comes back from its file predicting
// the same; bad input is an Error, not a crash.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <numeric>

#include "api/pcnn.hpp"
#include "data/subset.hpp"
#include "models/serialize.hpp"
#include "tests/harness.hpp"
#include "tests/hostile_files.hpp"
#include "tests/synthetic.hpp"

namespace pcnn::test {

namespace {
ModelSpec small_cnn() {  // 12x12 -> conv 3x3 x4 -> maxpool 2 -> dense 10
  return api::NetworkBuilder("small", 1, 12, 12)
      .conv(4, 3, 1, 1, "relu")
      .maxpool(2)
      .flatten()
      .dense(10)
      .spec();
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("api: the builder writes the spec it is told, and refuses impossible ones") {
  const ModelSpec s = small_cnn();
  CHECK(s.classes == 10);
  CHECK(s.in_h == 12);
  REQUIRE(s.layers.size() == 4);
  CHECK(s.layers[0].type == "conv");
  CHECK(s.layers[0].act == "relu");
  CHECK(s.layers[1].stride == 2);  // a pool's stride defaults to its window
  CHECK_THROWS_AS(api::NetworkBuilder("big", 1, 4, 4).conv(2, 7).flatten().dense(3).spec(), Error);
  CHECK_THROWS_AS(api::NetworkBuilder("open", 1, 8, 8).flatten().dense(3).activation("relu").spec(),
                  Error);
  CHECK_THROWS_AS(api::model_spec("no_such_model"), Error);
  // Padded pools, dropout and global average pooling, checked like the rest.
  const ModelSpec r = api::NetworkBuilder("regularised", 1, 12, 12)
                          .conv(4, 3, 1, 1, "relu").maxpool(3, 2).pad(1).dropout(0.25)
                          .global_avgpool().dense(10).spec();
  CHECK(r.layers[1].pad == 1);
  CHECK(r.layers[2].rate == 0.25);
  CHECK(r.layers[3].type == "globalavgpool");
  CHECK_THROWS_AS(api::NetworkBuilder("p", 1, 8, 8).maxpool(2).pad(2).dense(3).spec(), Error);
  CHECK_THROWS_AS(api::NetworkBuilder("r", 1, 8, 8).dropout(1.0).dense(3).spec(), Error);
  CHECK_THROWS_AS(api::NetworkBuilder("q", 1, 8, 8).flatten().pad(1), Error);
}

TEST_CASE("api: a model trained on a part records the whole data set, as pcnn train does") {
  // --limit then --val-split, as the tool cuts them; the provenance is the whole folder's.
  DatasetPair whole;
  whole.train = synthetic_dataset(120, 12, 12, 31);
  whole.test = synthetic_dataset(50, 12, 12, 32);
  whole.source = whole.train.source = whole.test.source = "/data/somewhere";
  whole.train.images_file = "/data/somewhere/train-images-idx3-ubyte";
  const Provenance tool = data_provenance(whole);  // what pcnn train --save records
  CHECK(tool.train_count == 120);
  DatasetPair part = whole;
  keep_first(part.train, 80);
  keep_first(part.test, 30);
  const Dataset val = split_validation(part.train, 0.25, 3);
  REQUIRE(part.train.count == 60);
  CHECK(val.origin().count == 120);
  CHECK(data_provenance(part) == tool);  // cut or not, the same description

  api::Network net(small_cnn(), "serial", 4, 1);
  api::TrainOptions o;
  o.batch = 20;
  o.progress_every_s = 0;
  net.train(part.train, &part.test, o);
  const std::string path = scratch_path("api_part.pcnn");  // per process: suites run side by side
  net.save(path);
  const SavedModel saved = load_model(path);
  std::remove(path.c_str());
  Provenance data_only = saved.provenance;
  data_only.recipe = tool.recipe;
  data_only.epochs = tool.epochs;
  data_only.final_accuracy = tool.final_accuracy;
  CHECK(data_only == tool);
  CHECK(data_difference(saved.provenance, data_provenance(whole)).empty());
  CHECK(saved.provenance.epochs == 1);
}

}  // TEST_SUITE

namespace {
// The short runs below: batch 32, learning rate 0.02, no progress reports by time.
api::TrainOptions short_run(int epochs) {
  api::TrainOptions o;
  o.epochs = epochs;
  o.batch = 32;
  o.learning_rate = 0.02f;
  o.progress_every_s = 0;
  return o;
}
}  // namespace

TEST_SUITE("backend") {

TEST_CASE("api: the cosine schedule sets each epoch's learning rate") {
  const Dataset train = synthetic_dataset(64, 12, 12, 23);
  api::Network net(small_cnn(), backend_name(), 3);
  api::TrainOptions o = short_run(3);
  o.cosine_schedule = true;
  const std::vector<EpochStats> epochs = net.train(train, nullptr, o);
  REQUIRE(epochs.size() == 3);
  // (1 + cos(pi e / 3)) / 2 for e = 0, 1, 2: 1, 0.75, 0.25
  CHECK(epochs[0].learning_rate == doctest::Approx(0.02));
  CHECK(epochs[1].learning_rate == doctest::Approx(0.015));
  CHECK(epochs[2].learning_rate == doctest::Approx(0.005));
}

TEST_CASE("api: training in bf16 keeps the weights, learns, and evaluates in bf16") {
  const Dataset train = synthetic_dataset(320, 12, 12, 21);
  api::Network net(small_cnn(), backend_name(), 3);
  api::TrainOptions o = short_run(1);
  const double before = net.evaluate(train).loss;
  o.precision = Precision::BF16;
  const std::vector<EpochStats> bf16 = net.train(train, nullptr, o);
  const double after = net.evaluate(train).loss;
  CHECK(std::isfinite(bf16[0].train_loss));
  CHECK(after < before);
  o.precision = Precision::F32;  // rebuilt in fp32, the bf16 run's weights kept
  net.train(train, nullptr, o);
  CHECK(std::isfinite(net.evaluate(train).loss));
}

TEST_CASE("api: train with progress, predict as evaluate counts, save and load") {
  const Dataset train = synthetic_dataset(320, 12, 12, 21);
  const Dataset test = synthetic_dataset(100, 12, 12, 22);
  api::Network net(small_cnn(), backend_name(), 3);
  CHECK(net.backend_name() == backend_name());

  api::TrainOptions o = short_run(3);
  o.progress_every_steps = 5;
  std::vector<api::Progress> reports;
  int epoch_calls = 0;
  const std::vector<EpochStats> epochs = net.train(
      train, &test, o, [&](const api::Progress& p) { reports.push_back(p); },
      [&](const EpochStats&) { ++epoch_calls; });
  REQUIRE(epochs.size() == 3);
  CHECK(epoch_calls == 3);
  CHECK(reports.size() == 3 * 2);  // 10 steps per epoch, a report every 5
  CHECK(reports.front().step == 5);
  CHECK(reports.front().steps == 10);
  CHECK(reports.back().epoch == 3);
  INFO("backend " << backend_name() << ": train loss " << epochs.front().train_loss << " -> "
                  << epochs.back().train_loss << ", test accuracy " << epochs.back().test_accuracy);
  CHECK(epochs.back().train_loss < epochs.front().train_loss);
  CHECK(epochs.back().test_accuracy > 0.6);

  const std::vector<api::Prediction> predicted = net.predict(test);
  REQUIRE(predicted.size() == size_t(test.count));
  int right = 0;
  for (int i = 0; i < test.count; ++i) {
    const api::Prediction& p = predicted[size_t(i)];
    REQUIRE(p.probabilities.size() == 10);
    const double sum = std::accumulate(p.probabilities.begin(), p.probabilities.end(), 0.0);
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    for (float q : p.probabilities) CHECK(q <= p.probabilities[size_t(p.label)]);
    right += p.label == test.labels[size_t(i)];
  }
  const EvalResult r = net.evaluate(test);
  CHECK(r.accuracy == doctest::Approx(double(right) / test.count));
  CHECK(r.accuracy == doctest::Approx(epochs.back().test_accuracy));

  // One image at a time gives what the batch gave.
  const api::Prediction one = net.predict(&test.images[12 * 12 * 7], 12, 12);
  CHECK(one.label == predicted[7].label);

  const std::string path = scratch_path("api_model.pcnn");  // per process: suites run side by side
  net.save(path);
  api::Network back = api::Network::load(path, backend_name());
  std::remove(path.c_str());
  CHECK(back.parameter_count() == net.parameter_count());
  const std::vector<api::Prediction> again = back.predict(test);
  for (size_t i = 0; i < again.size(); ++i)
    for (size_t k = 0; k < 10; ++k)
      CHECK(again[i].probabilities[k] ==
            doctest::Approx(predicted[i].probabilities[k]).epsilon(1e-4));
}

TEST_CASE("api: a larger training batch than the network was built for keeps its weights") {
  const Dataset train = synthetic_dataset(600, 12, 12, 23);
  const Dataset probe = synthetic_dataset(8, 12, 12, 24);
  api::Network net(small_cnn(), backend_name(), 5);
  const std::vector<api::Prediction> initial = net.predict(probe);
  api::TrainOptions o;
  o.batch = 32;
  o.learning_rate = 0.02f;
  o.progress_every_s = 0;
  net.train(train, nullptr, o);
  const std::vector<api::Prediction> trained = net.predict(probe);
  o.batch = 300;  // past the 256 it was built for: rebuilt, and must go on from these weights
  o.learning_rate = 1e-7f;
  net.train(train, nullptr, o);
  const std::vector<api::Prediction> after = net.predict(probe);
  double moved_by_training = 0, moved_by_rebuild = 0;
  for (size_t i = 0; i < after.size(); ++i)
    for (size_t k = 0; k < 10; ++k) {
      moved_by_training += std::fabs(trained[i].probabilities[k] - initial[i].probabilities[k]);
      moved_by_rebuild += std::fabs(after[i].probabilities[k] - trained[i].probabilities[k]);
    }
  INFO("probabilities moved " << moved_by_training << " in training, " << moved_by_rebuild
                              << " across the rebuild");
  CHECK(moved_by_training > 0.5);
  CHECK(moved_by_rebuild < 1e-2);
}

TEST_CASE("api: raw pixels of several channels predict as the same images in a data set") {
  // 3 x 10 x 10 images into a 3 x 12 x 12 network: padded as in training, every plane read.
  const ModelSpec spec = api::NetworkBuilder("rgb", 3, 12, 12)
                             .conv(4, 3, 1, 1, "relu").maxpool(2).flatten().dense(10).spec();
  api::Network net(spec, backend_name(), 9);
  const Dataset images = synthetic_rgb_dataset(6, 10, 27);
  const std::vector<api::Prediction> from_set = net.predict(images);
  const std::vector<api::Prediction> from_pixels = net.predict(images.images.data(), 6, 3, 10, 10);
  REQUIRE(from_pixels.size() == 6);
  for (size_t i = 0; i < 6; ++i)
    for (size_t k = 0; k < 10; ++k)
      CHECK(from_pixels[i].probabilities[k] == from_set[i].probabilities[k]);
  const size_t image = 3 * 10 * 10;
  const std::vector<api::Prediction> fifth = net.predict(&images.images[4 * image], 1, 3, 10, 10);
  // One image alone is another batch size, for which cudnn may pick other algorithms (H200:
  // not bitwise equal there), so within 1e-5.
  REQUIRE(fifth.size() == 1);
  for (size_t k = 0; k < 10; ++k)
    CHECK(fifth[0].probabilities[k] == doctest::Approx(from_set[4].probabilities[k]).epsilon(1e-5));
  // The blue plane matters: the same image with another blue plane predicts otherwise.
  std::vector<uint8_t> other(images.images.begin() + 4 * image, images.images.begin() + 5 * image);
  for (size_t p = 200; p < 300; ++p) other[p] = uint8_t(255 - other[p]);
  CHECK(net.predict(other.data(), 1, 3, 10, 10).at(0).probabilities != fifth.at(0).probabilities);
  // Another channel count than the model's is an Error saying so, not a read past the buffer.
  CHECK_THROWS_WITH_AS(net.predict(images.images.data(), 2, 10, 10),
                       doctest::Contains("takes 3 input channels, the data set has 1"), Error);
  CHECK_THROWS_AS(net.predict(images.images.data(), 1, 0, 10, 10), Error);
}

TEST_CASE("api: bad input is an Error naming what is wrong") {
  api::Network net(small_cnn(), backend_name());
  Dataset wrong = synthetic_dataset(64, 12, 12, 25);
  wrong.labels[3] = 12;  // past the 10 classes
  api::TrainOptions o;
  o.batch = 32;
  CHECK_THROWS_AS(net.train(wrong, nullptr, o), Error);
  o.epochs = 0;
  CHECK_THROWS_AS(net.train(synthetic_dataset(64, 12, 12, 26), nullptr, o), Error);
  const std::vector<uint8_t> big(28 * 28, 0);
  CHECK_THROWS_AS(net.predict(big.data(), 28, 28), Error);  // larger than the 12x12 input
  CHECK_THROWS_AS(net.predict(big.data(), 0, 12, 12), Error);
  CHECK_THROWS_AS(api::Network::load("no/such/model.pcnn", backend_name()), Error);
  CHECK_THROWS_AS(api::read_images("no/such/images-idx3-ubyte"), Error);
}

}  // TEST_SUITE

}  // namespace pcnn::test
