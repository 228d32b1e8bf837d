// A network written in code (no JSON, no built-in name), trained briefly on an MNIST-format
// folder and evaluated.
//   define_network DATA_DIR [LIMIT] [BACKEND]
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
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR [LIMIT] [BACKEND]\n", argv[0]);
    return 2;
  }
  const int limit = argc > 2 ? to_int(argv[2]) : 2000;
  if (limit < 0) {
    std::fprintf(stderr, "define_network: LIMIT must be a whole number >= 1, got '%s'\n", argv[2]);
    return 2;
  }
  const char* backend = argc > 3 ? argv[3] : "";
  try {
    // 28x28 -> conv 3x3 x8 (pad 1) -> maxpool 2 -> conv 3x3 x16 -> maxpool 2 -> 64 -> 10
    const pcnn::ModelSpec spec = pcnn::api::NetworkBuilder("small_cnn", 1, 28, 28)
                                     .conv(8, 3, 1, 1, "relu")
                                     .maxpool(2)
                                     .conv(16, 3, 1, 0, "relu")
                                     .maxpool(2)
                                     .flatten()
                                     .dense(64, "relu")
                                     .dense(10)
                                     .spec();
    const pcnn::DatasetPair data = pcnn::api::load_mnist(argv[1], limit);
    pcnn::api::Network net(spec, backend, /*seed=*/7);
    std::printf("%s: %zu parameters, backend %s\n", spec.name.c_str(), net.parameter_count(),
                net.backend_name().c_str());
    pcnn::api::TrainOptions options;
    options.epochs = 2;
    options.batch = 32;
    options.progress_every_s = 0;  // epoch lines only
    for (const pcnn::EpochStats& e : net.train(data.train, nullptr, options))
      std::printf("epoch %d  train_loss %.4f  train_acc %.4f\n", e.epoch, e.train_loss,
                  e.train_accuracy);
    const pcnn::EvalResult r = net.evaluate(data.test);
    std::printf("test accuracy %.4f on %d images\n", r.accuracy, r.count);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "define_network: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
