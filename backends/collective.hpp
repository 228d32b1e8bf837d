// Collectives for data-parallel training: one backend object per device ("replica"), and an
// all-reduce that leaves every replica's buffer holding the mean over replicas. The default
// goes through host memory in a fixed order (any backend, deterministic); GPU builds with NCCL
// provide "nccl" for the cuda backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace pcnn {

class Collective {
 public:
  virtual ~Collective() = default;
  virtual std::string name() const = 0;
  // bufs[r] (n floats) lives on replica r; afterwards each holds the mean of all of them.
  // Ordered after the work already launched on each replica, like any other kernel.
  virtual void allreduce_mean(const std::vector<float*>& bufs, size_t n) = 0;
};

// Sums in replica order in host memory and copies the mean back: slow, portable, deterministic.
std::unique_ptr<Collective> make_host_collective(const std::vector<Backend*>& replicas);

// The best collective for these replicas of backend `name`: its registry entry's own ("nccl" for
// cuda where built with NCCL), else the host one. `prefer` = "host" forces the host collective;
// any other non-empty `prefer` must name the backend's own.
std::unique_ptr<Collective> make_collective(const std::string& name,
                                            const std::vector<Backend*>& replicas,
                                            const std::string& prefer = "");

}  // namespace pcnn
