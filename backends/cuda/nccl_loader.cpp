// NCCL, opened only when the cuda backend's all-reduce is created (dynamic_library.hpp says
// why): the NCCL entry points nccl_collective.cu calls, each forwarded to the library opened
// on first use. Without the library, ncclCommInitAll fails with a message naming it.
#include <nccl.h>

#include <string>

#include "backends/cuda/dynamic_library.hpp"

// PCNN_NCCL_LIBRARY: the library found when the build was configured (CMake defines it); then the
// sonames the loader may find.
PCNN_DYNAMIC_LIBRARY(nccl_library, PCNN_NCCL_LIBRARY, "libnccl.so.2", "libnccl.so")

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

PCNN_DYNAMIC_ERROR_STRING(nccl_library(), "NCCL", ncclGetErrorString, ncclResult_t)
