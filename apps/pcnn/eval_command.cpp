// pcnn eval: test accuracy of a saved model, with a warning when the model file says it was
// trained on other data than it is given.
#include <cstdio>

#include "apps/pcnn/commands.hpp"
#include "apps/pcnn/common.hpp"
#include "apps/pcnn/options.hpp"
#include "models/provenance.hpp"
#include "models/serialize.hpp"
#include "train/trainer.hpp"

namespace pcnn::cli {

Command add_eval_command(CLI::App& app) {
  struct Options {
    std::string load, data, backend, data_format;
    int threads = 0, batch = 256, limit = 0;
  };
  auto o = std::make_shared<Options>();
  auto* sub = app.add_subcommand("eval", "Test accuracy of a saved model");
  add_path_option(*sub, "--load", o->load, "model file written by pcnn train --save")->required();
  add_path_option(*sub, "--data,-d", o->data,
                  "data folder: MNIST-format, CIFAR-10/100 or folders of images (default: "
                  "Fashion-MNIST)");
  add_data_format_option(*sub, o->data_format);
  sub->add_option("--limit", o->limit, "use only the first N test images (quick runs)")
      ->check(whole_number(1, kMaxImages));
  add_backend_option(*sub, o->backend);
  add_threads_option(*sub, o->threads, "CPU threads (0 = all cores)");
  add_batch_option(*sub, o->batch, "images per forward pass");
  return {sub, [o] {
            const SavedModel sm = load_model(o->load);
            auto be = open_backend(o->backend, o->threads);
            DatasetPair data = load_data(o->data, 0, o->data_format, &sm.spec);
            // The whole folder is what the model file describes, whatever --limit keeps.
            const std::string differs = data_difference(sm.provenance, data_provenance(data));
            keep_first(data, o->limit);
            data.check_classes(sm.spec.classes, sm.spec.name);
            data.check_labels(sm.spec.classes);
            if (!differs.empty())
              warn("pcnn eval", "'" + o->load + "' was trained on other data than " +
                                    data.source + " (" + differs + ")");
            Model model(*be, sm.spec, o->batch, 0);
            model.set_params(sm.params);
            model.set_state(sm.state);
            const EvalResult r = evaluate(*be, model, data.test, sm.normalization());
            std::printf("%s on %s (%d test images), backend %s: test accuracy %.4f, loss %.4f\n",
                        sm.spec.name.c_str(), data.source.c_str(), r.count, be->name().c_str(),
                        r.accuracy, r.loss);
            return kExitSuccess;
          }};
}

}  // namespace pcnn::cli
