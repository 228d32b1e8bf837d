// Training curves of one run as an SVG figure, drawn from the rows of its training log: loss and
// accuracy per epoch, and, when the log has step rows, the training loss step by step.
#pragma once

#include <string>
#include <vector>

#include "report/training_log.hpp"

namespace pcnn {

void write_training_plot(const std::string& path, const std::string& title,
                         const std::vector<LogRow>& rows);

}  // namespace pcnn
