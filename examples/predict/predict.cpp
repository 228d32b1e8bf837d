// Loads a saved model and classifies the images of an IDX file, printing the first few.
//   predict MODEL_FILE IMAGES_IDX [COUNT] [BACKEND]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <pcnn/pcnn.hpp>

// A whole decimal number of at least 1, or -1.
int to_int(const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && v >= 1 && v <= 1000000000 ? int(v) : -1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL_FILE IMAGES_IDX [COUNT] [BACKEND]\n", argv[0]);
    return 2;
  }
  const int shown = argc > 3 ? to_int(argv[3]) : 10;
  if (shown < 0) {
    std::fprintf(stderr, "predict: COUNT must be a whole number >= 1, got '%s'\n", argv[3]);
    return 2;
  }
  const char* backend = argc > 4 ? argv[4] : "";
  try {
    pcnn::api::Network net = pcnn::api::Network::load(argv[1], backend);
    const pcnn::Dataset images = pcnn::api::read_images(argv[2]);
    const std::vector<pcnn::api::Prediction> predictions = net.predict(images);
    std::printf("%s on %s: %d images of %dx%d\n", net.spec().name.c_str(),
                net.backend_name().c_str(), images.count, images.height, images.width);
    for (int i = 0; i < std::min(shown, images.count); ++i) {
      const pcnn::api::Prediction& p = predictions[size_t(i)];
      std::printf("image %d: class %d (p = %.3f)\n", i, p.label,
                  double(p.probabilities[size_t(p.label)]));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "predict: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
