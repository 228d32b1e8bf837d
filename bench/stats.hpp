// Median and spread of repeated timings: the numbers every bench result is reported with.
#pragma once

#include <vector>

namespace pcnn::bench {

// Seconds per iteration over the timed blocks of one measurement.
struct Summary {
  double median = 0, min = 0, max = 0, q1 = 0, q3 = 0;
  int samples = 0;  // timed blocks behind the numbers (0: not measured)
  int block = 1;    // iterations per timed block
};

// per_iteration[i]: one block's time divided by its iteration count.
Summary summarize(std::vector<double> per_iteration, int block);

}  // namespace pcnn::bench
