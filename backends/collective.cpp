// The host collective, and the choice between it and a backend's own (its registry entry's).
#include "backends/collective.hpp"

#include "backends/registry.hpp"
#include "core/check.hpp"

namespace pcnn {

namespace {
class HostCollective : public Collective {
 public:
  explicit HostCollective(std::vector<Backend*> replicas) : replicas_(std::move(replicas)) {}
  std::string name() const override { return "host"; }
  void allreduce_mean(const std::vector<float*>& bufs, size_t n) override {
    PCNN_CHECK(bufs.size() == replicas_.size(), "all-reduce over " << bufs.size()
                                                                   << " buffers, expected "
                                                                   << replicas_.size());
    sum_.assign(n, 0.0);
    host_.resize(n);
    for (size_t r = 0; r < bufs.size(); ++r) {  // fixed order: the same sum on every run
      replicas_[r]->download(host_.data(), bufs[r], n * sizeof(float));
      for (size_t i = 0; i < n; ++i) sum_[i] += host_[i];
    }
    const double inv = 1.0 / double(bufs.size());
    for (size_t i = 0; i < n; ++i) host_[i] = float(sum_[i] * inv);
    for (size_t r = 0; r < bufs.size(); ++r) {
      replicas_[r]->upload(bufs[r], host_.data(), n * sizeof(float));
      replicas_[r]->synchronize();  // host_ is reused by the next call
    }
  }

 private:
  std::vector<Backend*> replicas_;
  std::vector<double> sum_;
  std::vector<float> host_;
};
}  // namespace

std::unique_ptr<Collective> make_host_collective(const std::vector<Backend*>& replicas) {
  return std::make_unique<HostCollective>(replicas);
}

std::unique_ptr<Collective> make_collective(const std::string& name,
                                            const std::vector<Backend*>& replicas,
                                            const std::string& prefer) {
  PCNN_CHECK(!replicas.empty(), "a collective needs at least one replica");
  const BackendEntry& e = backend_entry(name);
  PCNN_CHECK(prefer.empty() || prefer == "host" || prefer == e.collective,
             "backend '" << name << "' has no collective '" << prefer << "' in this build (it has: "
                         << (e.collective == "host" ? "host" : e.collective + ", host") << ")");
  if (e.create_collective && prefer != "host") return e.create_collective(replicas);
  return make_host_collective(replicas);
}

}  // namespace pcnn
