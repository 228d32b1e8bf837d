// Dense: parameters and the calls into the (optionally fused) linear entry points.
#include "layers/dense.hpp"

#include "core/vocabulary.hpp"

namespace pcnn {

Dense::Dense(FeatureShape in, int units, Activation act, InitKind init)
    : WeightedLayer(units, int(in.size()), units, init), act_(act) {
  in_ = in;
  out_ = {units, 1, 1};
}

std::string Dense::describe() const {
  return "dense " + std::to_string(in_.size()) + "->" + std::to_string(units()) +
         (act_ == Activation::None ? "" : std::string(" +") + activation_name(act_));
}

// d(pre-activation) in the backward.
size_t Dense::workspace_floats_per_sample() const {
  return act_ != Activation::None ? size_t(units()) : 0;
}

void Dense::forward(Backend& be, int N, const float* x, float* y) {
  be.linear_forward(N, int(in_.size()), units(), act_, x, w_, b_, y);
}

void Dense::backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                     float* dx) {
  be.linear_backward(N, int(in_.size()), units(), act_, x, w_, y, dy, workspace_, dx, dw_, db_);
}

void Dense::forward16(Backend& be, int N, Precision p, const uint16_t* x, uint16_t* y) {
  be.linear_forward_16(p, N, int(in_.size()), units(), act_, x, w_, b_, staging_, y);
}

void Dense::backward16(Backend& be, int N, Precision p, const uint16_t* x, const uint16_t* y,
                       const uint16_t* dy, uint16_t* dx) {
  be.linear_backward_16(p, N, int(in_.size()), units(), act_, x, w_, y, dy, workspace_, staging_,
                        dx, dw_, db_);
}

}  // namespace pcnn
