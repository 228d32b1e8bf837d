// Loads a saved model and classifies the images of an IDX file, printing the first few.
//   predict MODEL_FILE IMAGES_IDX [COUNT] [BACKEND]
#include <algorithm>
#include <cstdio>
#include <string>

#include <pcnn/pcnn.hpp>

#include "../example_args.hpp"

int main(int argc, char** argv) {
  int shown = 10;            // predictions to print
  const char* backend = "";  // "": the fastest one usable here
  if (!example::read_count_and_backend(argc, argv, 2, "MODEL_FILE IMAGES_IDX [COUNT] [BACKEND]",
                                       "COUNT", shown, backend))
    return 2;
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
