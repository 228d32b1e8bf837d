// Trains LeNet-5 on an MNIST-format folder, printing progress, and saves the model.
//   train DATA_DIR [--epochs N] [--limit N] [--backend NAME] [--save FILE]
#include <cstdio>
#include <string>

#include <pcnn/pcnn.hpp>

#include "../example_args.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s DATA_DIR [--epochs N] [--limit N] [--backend NAME] "
                         "[--save FILE]\n", argv[0]);
    return 2;
  }
  std::string data_dir = argv[1], backend, save = "lenet5.pcnn";
  int epochs = 2, limit = 0;
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i], value = i + 1 < argc ? argv[i + 1] : "";
    if (key == "--epochs") epochs = example::to_int(value, 1);
    else if (key == "--limit") limit = example::to_int(value, 0);
    else if (key == "--backend") backend = value;
    else if (key == "--save") save = value;
    else { std::fprintf(stderr, "train: unknown option '%s'\n", key.c_str()); return 2; }
    if (epochs < 0 || limit < 0 || value.empty()) {
      std::fprintf(stderr, "train: %s needs a value (a whole number for --epochs, --limit)\n",
                   key.c_str());
      return 2;
    }
  }
  try {
    const pcnn::DatasetPair data = pcnn::api::load_mnist(data_dir, limit);
    pcnn::api::Network net(pcnn::api::model_spec("lenet5"), backend);
    std::printf("lenet5 (%zu parameters) on %s, %d training images, backend %s [%s]\n",
                net.parameter_count(), data_dir.c_str(), data.train.count,
                net.backend_name().c_str(), net.device_name().c_str());

    pcnn::api::TrainOptions options;
    options.epochs = epochs;
    options.progress_every_s = 0.5;
    net.train(data.train, &data.test, options,
              [](const pcnn::api::Progress& p) {
                std::printf("  epoch %d/%d  step %d/%d  loss %.4f\n", p.epoch, p.epochs, p.step,
                            p.steps, p.loss);
                std::fflush(stdout);
              },
              [&](const pcnn::EpochStats& e) {
                std::printf("epoch %d/%d  train_loss %.4f  test_acc %.4f  %.0f images/s\n",
                            e.epoch, epochs, e.train_loss, e.test_accuracy, e.images_per_s);
              });
    net.save(save);
    std::printf("saved %s\n", save.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
