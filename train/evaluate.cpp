// Evaluation: accuracy and mean loss of a model over a whole data set, in its largest batches.
#include <algorithm>

#include "train/replica.hpp"

namespace pcnn {

EvalResult evaluate(Backend& be, Model& model, const Dataset& data, const Normalization& norm) {
  DeviceData dd(be, data, norm);
  const int batch = model.max_batch();
  const BatchLayout full = layout_for(model, batch, data);
  DeviceArray<float> x(be, size_t(batch) * model.input_shape().size());
  DeviceArray<int32_t> y(be, size_t(batch));
  DeviceArray<float> metrics(be, kMetricCount);
  be.fill(metrics.get(), 0.f, kMetricCount);
  for (int first = 0; first < data.count; first += batch) {
    BatchLayout l = full;
    l.batch = std::min(batch, data.count - first);
    be.gather_batch(dd.view(), first, l, x.get(), y.get());
    model.forward(l.batch, x.get());
    model.loss().forward_backward(be, l.batch, model.logits(), y.get(), nullptr, metrics.get());
  }
  const std::vector<float> m = metrics.download();
  EvalResult r;
  r.count = data.count;
  r.loss = double(m[kMetricLossSum]) / data.count;
  r.accuracy = double(m[kMetricCorrect]) / data.count;
  return r;
}

}  // namespace pcnn
