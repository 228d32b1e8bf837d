// Naming a numerical fault for people: the step in epoch terms, and the layer (and its weights
// or biases) of the first gradient that was not finite, through the model's parameter arena.
#include <string>

#include "train/trainer.hpp"

namespace pcnn {

std::string parameter_name(const Model& model, int64_t index) {
  int64_t start = 0;
  for (size_t i = 0; i < model.layer_count(); ++i) {
    const Layer& l = model.layer(i);
    const int64_t count = int64_t(l.param_count());
    if (index < start + count) {
      const bool weight = index - start < int64_t(l.weight_param_count());
      return "layer " + std::to_string(i + 1) + " (" + l.describe() + ") " +
             (weight ? "weights" : "bias");
    }
    start += count;
  }
  return "parameter " + std::to_string(index) + " (past the model's " + std::to_string(start) +
         ")";
}

std::string describe_fault(const Model& model, const StepFault& f, int steps_per_epoch) {
  const int64_t zero_based = f.step - 1;
  const std::string where = "step " + std::to_string(f.step) + " (epoch " +
                            std::to_string(zero_based / steps_per_epoch + 1) + ", step " +
                            std::to_string(zero_based % steps_per_epoch + 1) + " of " +
                            std::to_string(steps_per_epoch) + ")";
  if (f.grad_index < 0) return "the loss is not finite at " + where;
  return "the gradients are not finite at " + where + ", first in " +
         parameter_name(model, f.grad_index);
}

}  // namespace pcnn
