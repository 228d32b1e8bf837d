// Training curves: train/test loss on the left, train/test accuracy on the right.
#include "report/training_plot.hpp"

#include "report/svg_plot.hpp"

namespace pcnn {

void write_training_plot(const std::string& path, const std::string& title,
                         const std::vector<EpochStats>& history) {
  Series train_loss{"train loss", {}, {}}, test_loss{"test loss", {}, {}};
  Series train_acc{"train accuracy", {}, {}}, test_acc{"test accuracy", {}, {}};
  for (const EpochStats& e : history) {
    for (Series* s : {&train_loss, &test_loss, &train_acc, &test_acc}) s->x.push_back(e.epoch);
    train_loss.y.push_back(e.train_loss);
    test_loss.y.push_back(e.test_loss);
    train_acc.y.push_back(e.train_accuracy);
    test_acc.y.push_back(e.test_accuracy);
  }
  Figure fig;
  LineChart loss, acc;
  loss.title = title + ": loss";
  loss.x_label = acc.x_label = "epoch";
  loss.y_label = "cross-entropy";
  loss.series = {train_loss, test_loss};
  loss.y_from_zero = true;
  acc.title = title + ": accuracy";
  acc.y_label = "accuracy";
  acc.series = {train_acc, test_acc};
  for (const EpochStats& e : history) loss.x_ticks.push_back(e.epoch), acc.x_ticks.push_back(e.epoch);
  fig.lines = {loss, acc};
  write_svg(path, fig);
}

}  // namespace pcnn
