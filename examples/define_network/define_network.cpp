// A network written in code (no JSON, no built-in name), trained briefly on an MNIST-format
// folder and evaluated.
//   define_network DATA_DIR [LIMIT] [BACKEND]
#include <cstdio>
#include <string>

#include <pcnn/pcnn.hpp>

#include "../example_args.hpp"

int main(int argc, char** argv) {
  int limit = 2000;          // training images (and as many test images) to read
  const char* backend = "";  // "": the fastest one usable here
  if (!example::read_count_and_backend(argc, argv, 1, "DATA_DIR [LIMIT] [BACKEND]", "LIMIT", limit,
                                       backend))
    return 2;
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
