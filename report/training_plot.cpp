// Training curves: train/test loss, train/test accuracy (epoch rows), and the training loss of
// the step rows against the step, when there are any.
#include "report/training_plot.hpp"

#include "core/check.hpp"
#include "report/svg_plot.hpp"

namespace pcnn {

namespace {
// A series of the rows' (x, y) pairs, leaving out rows where y is absent.
Series series_of(const std::string& name, const std::vector<LogRow>& rows,
                 double (*x)(const LogRow&), double LogRow::*y) {
  Series s{name, {}, {}};
  for (const LogRow& r : rows)
    if (!std::isnan(r.*y)) s.x.push_back(x(r)), s.y.push_back(r.*y);
  return s;
}
double epoch_of(const LogRow& r) { return r.epoch; }
double step_of(const LogRow& r) { return double(r.step); }
}  // namespace

void write_training_plot(const std::string& path, const std::string& title,
                         const std::vector<LogRow>& rows) {
  std::vector<LogRow> epochs, steps;
  for (const LogRow& r : rows) (r.is_epoch_row() ? epochs : steps).push_back(r);
  PCNN_CHECK(!epochs.empty() || !steps.empty(), "no rows to plot for '" << path << "'");
  Figure fig;
  if (!epochs.empty()) {
    LineChart loss, acc;
    loss.title = title + ": loss";
    loss.x_label = acc.x_label = "epoch";
    loss.y_label = "cross-entropy";
    loss.series = {series_of("train loss", epochs, epoch_of, &LogRow::train_loss),
                   series_of("test loss", epochs, epoch_of, &LogRow::test_loss),
                   series_of("validation loss", epochs, epoch_of, &LogRow::val_loss)};
    loss.y_from_zero = true;
    acc.title = title + ": accuracy";
    acc.y_label = "accuracy";
    acc.series = {series_of("train accuracy", epochs, epoch_of, &LogRow::train_accuracy),
                  series_of("test accuracy", epochs, epoch_of, &LogRow::test_accuracy),
                  series_of("validation accuracy", epochs, epoch_of, &LogRow::val_accuracy)};
    for (const LogRow& e : epochs) loss.x_ticks.push_back(e.epoch), acc.x_ticks.push_back(e.epoch);
    fig.lines = {loss, acc};
  }
  if (!steps.empty()) {
    LineChart within;
    within.title = title + ": training loss within epochs";
    within.x_label = "step";
    within.y_label = "cross-entropy (mean since the previous point)";
    within.series = {series_of("train loss", steps, step_of, &LogRow::train_loss)};
    within.y_from_zero = true;
    fig.lines.push_back(within);
  }
  // A series with no points (an old log without test_loss, say) is left out of its chart.
  for (LineChart& c : fig.lines)
    for (size_t i = c.series.size(); i-- > 0;)
      if (c.series[i].x.empty()) c.series.erase(c.series.begin() + long(i));
  write_svg(path, fig);
}

}  // namespace pcnn
