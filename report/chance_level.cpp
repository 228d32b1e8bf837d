#include "report/chance_level.hpp"

#include <cmath>
#include <cstdio>

namespace pcnn {

std::string chance_level_warning(const LogRow& last, int classes, size_t test_images) {
  if (classes < 2 || test_images < 50 * size_t(classes)) return "";
  if (std::isnan(last.test_accuracy) || std::isnan(last.train_loss)) return "";
  const double chance_loss = std::log(double(classes));
  if (last.test_accuracy > 1.5 / classes || last.train_loss < 0.9 * chance_loss) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "the run ended at chance level (test accuracy %.2f %% with %d classes, training "
                "loss %.3f against ln %d = %.3f): the network learned nothing; a smaller --lr "
                "may help",
                100.0 * last.test_accuracy, classes, last.train_loss, classes, chance_loss);
  return buf;
}

}  // namespace pcnn
