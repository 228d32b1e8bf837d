// pcnn predict: classify images with a saved model. One line per image: its index, the most
// probable class and its probability, and the runners-up; the images come from an IDX file
// (gzipped or not) of the model's input size or smaller, as training reads them.
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "api/pcnn.hpp"
#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/options.hpp"

namespace pcnn::cli {

namespace {
struct PredictOptions {
  std::string load, images, backend;
  int threads = 0, first = 0, count = 10, top = 3;
};

int run_predict(const PredictOptions& o) {
  api::Network net = api::Network::load(o.load, o.backend, o.threads);
  Dataset all = api::read_images(o.images);
  PCNN_CHECK(o.first < all.count, "--first " << o.first << " is past the last image of '"
                                             << o.images << "' (" << all.count << " images)");
  const int n = std::min(o.count, all.count - o.first);
  const size_t pixels = size_t(all.height) * all.width;
  const std::vector<api::Prediction> p =
      net.predict(all.images.data() + size_t(o.first) * pixels, n, all.height, all.width);
  std::printf("%s on %s: images %d..%d of %s (%dx%d)\n", net.spec().name.c_str(),
              net.backend_name().c_str(), o.first, o.first + n - 1, o.images.c_str(),
              all.height, all.width);
  for (int i = 0; i < n; ++i) {
    const std::vector<float>& prob = p[size_t(i)].probabilities;
    std::vector<int> order(prob.size());
    std::iota(order.begin(), order.end(), 0);
    const int shown = std::min<int>(o.top, int(order.size()));
    // the most probable first; equal probabilities keep the lower class first, like the label
    std::partial_sort(order.begin(), order.begin() + shown, order.end(),
                      [&](int a, int b) { return prob[a] > prob[b] || (prob[a] == prob[b] && a < b); });
    std::printf("image %d: class %d", o.first + i, order[0]);
    for (int k = 0; k < shown; ++k)
      std::printf("%s%d %.4f", k == 0 ? "  (" : ", ", order[k], double(prob[order[k]]));
    std::printf(")\n");
  }
  return kExitSuccess;
}
}  // namespace

Command add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  auto* sub = app.add_subcommand("predict", "Classify images with a saved model");
  add_path_option(*sub, "--load", o->load, "model file written by pcnn train --save")->required();
  add_path_option(*sub, "--images", o->images,
                  "IDX image file (e.g. t10k-images-idx3-ubyte.gz) with images no larger than "
                  "the model's input")
      ->required();
  sub->add_option("--first", o->first, "index of the first image to classify")
      ->check(whole_number(0, kMaxImages))->capture_default_str();
  sub->add_option("--count,-n", o->count, "how many images to classify")
      ->check(whole_number(1, kMaxImages))->capture_default_str();
  sub->add_option("--top", o->top, "classes shown per image, most probable first")
      ->check(whole_number(1, 1000000))->capture_default_str();
  add_backend_option(*sub, o->backend);
  add_threads_option(*sub, o->threads, "CPU threads (0 = all cores)");
  return {sub, [o] { return run_predict(*o); }};
}

}  // namespace pcnn::cli
