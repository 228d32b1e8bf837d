// NCCL, opened only when the cuda backend's all-reduce is created (dynamic_library.hpp says
// why): the NCCL entry points nccl_collective.cu calls, each forwarded to the library opened
// on first use. Without the library, ncclCommInitAll fails with a message naming it.
#include <nccl.h>

#include <string>

#include "backends/cuda/dynamic_library.hpp"

namespace {

#ifndef PCNN_NCCL_LIBRARY
#define PCNN_NCCL_LIBRARY "libnccl.so.2"
#endif

const pcnn::cuda::DynamicLibrary& nccl_library() {
  static const pcnn::cuda::DynamicLibrary lib{PCNN_NCCL_LIBRARY, "libnccl.so.2", "libnccl.so"};
  return lib;
}

}  // namespace

#define PCNN_NCCL_FORWARD(name, params, args) \
  PCNN_DYNAMIC_FORWARD(nccl_library(), ncclResult_t, name, ncclSystemError, params, args)

PCNN_NCCL_FORWARD(ncclGetVersion, (int* version), (version))
PCNN_NCCL_FORWARD(ncclCommInitAll, (ncclComm_t* comm, int ndev, const int* devlist),
                  (comm, ndev, devlist))
PCNN_NCCL_FORWARD(ncclCommDestroy, (ncclComm_t comm), (comm))
PCNN_NCCL_FORWARD(ncclAllReduce,
                  (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                   ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),
                  (sendbuff, recvbuff, count, datatype, op, comm, stream))
PCNN_NCCL_FORWARD(ncclGroupStart, (), ())
PCNN_NCCL_FORWARD(ncclGroupEnd, (), ())

extern "C" const char* ncclGetErrorString(ncclResult_t result) {
  using Fn = const char* (*)(ncclResult_t);
  static const Fn fn = nccl_library().symbol<Fn>("ncclGetErrorString");
  if (fn) return fn(result);
  static const std::string missing =
      "the NCCL library could not be loaded (" + nccl_library().error() + ")";
  return missing.c_str();
}
