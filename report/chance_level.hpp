// A run whose training ended where guessing ends: accuracy near one in `classes` and a loss near
// ln(classes), what a network gives when it has collapsed to one class or to the classes' prior
// (too large a learning rate does that without a single non-finite value, so --on-nan never
// sees it). pcnn train warns rather than failing: the run did what was asked.
#pragma once

#include <cstddef>
#include <string>

#include "report/training_log.hpp"

namespace pcnn {

// The warning for such a last epoch row ("" when the run learned something, or a figure is
// missing): test accuracy at most 1.5 / classes and training loss at least 0.9 ln(classes), on a
// test set of at least 50 images a class (on fewer, a tiny trial run, chance says little).
std::string chance_level_warning(const LogRow& last, int classes, size_t test_images);

}  // namespace pcnn
