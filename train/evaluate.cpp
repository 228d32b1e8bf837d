// Evaluation: accuracy and mean loss of a model over a whole data set, in its largest batches.
#include <algorithm>

#include "core/check.hpp"
#include "train/replica.hpp"

namespace pcnn {

struct Evaluator::Buffers {
  Buffers(Backend& be, const Model& model, const Dataset& data, const Normalization& norm)
      : device(be, data, norm),
        batch(model.max_batch()),
        image_floats(model.input_shape().size()),
        layout(layout_for(model, batch, data)),
        x(be, size_t(batch) * image_floats),
        y(be, size_t(batch)),
        metrics(be, kMetricCount) {}
  DeviceData device;
  int batch;
  size_t image_floats;
  BatchLayout layout;
  DeviceArray<float> x;
  DeviceArray<int32_t> y;
  DeviceArray<float> metrics;
};

Evaluator::Evaluator(Backend& be, const Model& model, const Dataset& data,
                     const Normalization& norm)
    : be_(be), data_(data), b_(std::make_unique<Buffers>(be, model, data, norm)) {}

Evaluator::~Evaluator() = default;

EvalResult Evaluator::run(Model& model) {
  PCNN_CHECK(model.max_batch() >= b_->batch && model.input_shape().size() == b_->image_floats,
             "evaluate: the model does not take the batches this evaluator was set up for");
  be_.fill(b_->metrics.get(), 0.f, kMetricCount);
  for (int first = 0; first < data_.count; first += b_->batch) {
    BatchLayout l = b_->layout;
    l.batch = std::min(b_->batch, data_.count - first);
    be_.gather_batch(b_->device.view(), first, l, b_->x.get(), b_->y.get());
    model.forward(l.batch, b_->x.get());
    model.loss().forward_backward(be_, l.batch, model.logits(), b_->y.get(), nullptr,
                                  b_->metrics.get());
  }
  const std::vector<float> m = b_->metrics.download();
  EvalResult r;
  r.count = data_.count;
  r.loss = double(m[kMetricLossSum]) / data_.count;
  r.accuracy = double(m[kMetricCorrect]) / data_.count;
  return r;
}

EvalResult evaluate(Backend& be, Model& model, const Dataset& data, const Normalization& norm) {
  Evaluator e(be, model, data, norm);
  return e.run(model);
}

}  // namespace pcnn
