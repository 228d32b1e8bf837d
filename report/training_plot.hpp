// Training curves of one run (loss and accuracy per epoch) as an SVG figure.
#pragma once

#include <string>
#include <vector>

#include "train/trainer.hpp"

namespace pcnn {

void write_training_plot(const std::string& path, const std::string& title,
                         const std::vector<EpochStats>& history);

}  // namespace pcnn
