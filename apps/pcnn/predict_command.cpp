// pcnn predict: classify images with a saved model. One line per image: its index, the most
// probable class and its probability, and the runners-up; the images come from an IDX file
// (gzipped or not) of the model's input size or smaller, as training reads them, or PNG/JPEG
// files converted to the model's input. Class names are shown where the model file has them.
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
  std::vector<std::string> files;
  int threads = 0, first = 0, count = 10, top = 3;
};

// "image 3: class 7  (7 0.9812, 2 0.0100, 1 0.0044)", with names where the model has them.
void print_prediction(const std::string& what, const api::Prediction& p, int top,
                      const std::vector<std::string>& names) {
  const std::vector<float>& prob = p.probabilities;
  std::vector<int> order(prob.size());
  std::iota(order.begin(), order.end(), 0);
  const int shown = std::min<int>(top, int(order.size()));
  // the most probable first; equal probabilities keep the lower class first, like the label
  std::partial_sort(order.begin(), order.begin() + shown, order.end(),
                    [&](int a, int b) { return prob[a] > prob[b] || (prob[a] == prob[b] && a < b); });
  const auto name = [&](int k) {
    return size_t(k) < names.size() ? " " + names[size_t(k)] : std::string();
  };
  std::printf("%s: class %d%s", what.c_str(), order[0], name(order[0]).c_str());
  for (int k = 0; k < shown; ++k)
    std::printf("%s%d %.4f", k == 0 ? "  (" : ", ", order[k], double(prob[order[k]]));
  std::printf(")\n");
}

int run_predict(const PredictOptions& o) {
  api::Network net = api::Network::load(o.load, o.backend, o.threads);
  if (!o.files.empty()) {
    const std::vector<api::Prediction> p = net.predict_files(o.files);
    const ModelSpec& s = net.spec();
    std::printf("%s on %s: %zu image file%s as %dx%dx%d\n", s.name.c_str(),
                net.backend_name().c_str(), o.files.size(), o.files.size() == 1 ? "" : "s",
                s.in_c, s.in_h, s.in_w);
    for (size_t i = 0; i < o.files.size(); ++i)
      print_prediction(o.files[i], p[i], o.top, net.class_names());
    return kExitSuccess;
  }
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
  for (int i = 0; i < n; ++i)
    print_prediction("image " + std::to_string(o.first + i), p[size_t(i)], o.top,
                     net.class_names());
  return kExitSuccess;
}
}  // namespace

Command add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  auto* sub = app.add_subcommand("predict", "Classify images with a saved model");
  add_path_option(*sub, "--load", o->load, "model file written by pcnn train --save")->required();
  sub->add_option("files", o->files,
                  "PNG or JPEG files, each converted to the model's input (channels, then a "
                  "bilinear resize)")->check(not_empty());
  add_path_option(*sub, "--images", o->images,
                  "IDX image file (e.g. t10k-images-idx3-ubyte.gz) with images no larger than "
                  "the model's input");
  sub->add_option("--first", o->first, "index of the first image to classify (--images)")
      ->check(whole_number(0, kMaxImages))->capture_default_str();
  sub->add_option("--count,-n", o->count, "how many images to classify (--images)")
      ->check(whole_number(1, kMaxImages))->capture_default_str();
  sub->add_option("--top", o->top, "classes shown per image, most probable first")
      ->check(whole_number(1, 1000000))->capture_default_str();
  add_backend_option(*sub, o->backend);
  add_threads_option(*sub, o->threads, "CPU threads (0 = all cores)");
  return {sub, [o] {
            if (o->images.empty() && o->files.empty())
              throw CLI::ValidationError("--images", "give an IDX file with --images, or image "
                                                     "files (PNG, JPEG) after the options");
            if (!o->images.empty() && !o->files.empty())
              throw CLI::ValidationError("--images", "give an IDX file with --images or image "
                                                     "files, not both");
            return run_predict(*o);
          }};
}

}  // namespace pcnn::cli
