// The NCCL all-reduce for data-parallel training on the cuda backend: one communicator rank per
// replica (one GPU each), driven from one host thread, so every rank's call sits inside one
// ncclGroupStart/ncclGroupEnd. It runs on each replica's own stream, in order with its kernels.
// NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 unless the user set it.
#include <nccl.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backends/collective.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_check.hpp"
#include "core/check.hpp"

namespace pcnn {

namespace {

[[noreturn]] void throw_nccl_error(ncclResult_t rc, const char* call, const char* file, int line) {
  throw Error(std::string("NCCL error at ") + file + ":" + std::to_string(line) + ": " + call +
              ": " + ncclGetErrorString(rc));
}

// The CUDA checks' one body (cuda_check.hpp), with NCCL's status and words.
#define PCNN_NCCL_CHECK(x) PCNN_GPU_STATUS_CHECK(x, #x, ncclSuccess, throw_nccl_error)

class NcclCollective : public Collective {
 public:
  explicit NcclCollective(const std::vector<Backend*>& replicas) {
    setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
    std::vector<int> devices;
    std::set<int> distinct;
    for (Backend* b : replicas) {
      auto* cb = dynamic_cast<CudaBackend*>(b);
      PCNN_CHECK(cb, "the NCCL all-reduce needs cuda replicas, got '" << b->name() << "'");
      contexts_.push_back(&cb->context());
      devices.push_back(cb->context().device());
      distinct.insert(devices.back());
    }
    PCNN_CHECK(distinct.size() == devices.size(),
               "NCCL needs one GPU per replica; use --collective host to share a GPU");
    comms_.resize(devices.size());
    PCNN_NCCL_CHECK(ncclCommInitAll(comms_.data(), int(devices.size()), devices.data()));
  }
  ~NcclCollective() override {
    for (ncclComm_t c : comms_) ncclCommDestroy(c);
  }
  std::string name() const override {
    int v = 0;
    ncclGetVersion(&v);
    return "nccl " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
           std::to_string(v % 100);
  }
  void allreduce_mean(const std::vector<float*>& bufs, size_t n) override {
    PCNN_CHECK(bufs.size() == comms_.size(), "all-reduce over " << bufs.size()
                                                                << " buffers, expected "
                                                                << comms_.size());
    PCNN_NCCL_CHECK(ncclGroupStart());
    for (size_t r = 0; r < bufs.size(); ++r) {
      contexts_[r]->bind();
      PCNN_NCCL_CHECK(ncclAllReduce(bufs[r], bufs[r], n, ncclFloat, ncclAvg, comms_[r],
                                    contexts_[r]->stream()));
    }
    PCNN_NCCL_CHECK(ncclGroupEnd());
  }

 private:
  std::vector<cuda::CudaContext*> contexts_;
  std::vector<ncclComm_t> comms_;
};
}  // namespace

std::unique_ptr<Collective> create_nccl_collective(const std::vector<Backend*>& replicas) {
  return std::make_unique<NcclCollective>(replicas);
}

}  // namespace pcnn
