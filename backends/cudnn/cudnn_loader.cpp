// cuDNN, opened only when a cudnn backend is created (backends/cuda/dynamic_library.hpp says
// why): this file defines every cuDNN entry point the backend calls and forwards each to the
// library opened on first use. Without the library, cudnnCreate fails with a message naming it
// and the backend reports itself unusable; no other entry point is reached before that.
// Each definition must match cudnn.h's declaration (a C function declared twice with other
// parameters does not compile), so the rows below are checked against the header.
#include <cudnn.h>

#include <string>

#include "backends/cuda/dynamic_library.hpp"

// PCNN_CUDNN_LIBRARY: the library found when the build was configured (CMake defines it); then the
// sonames the loader may find.
PCNN_DYNAMIC_LIBRARY(cudnn_library, PCNN_CUDNN_LIBRARY, "libcudnn.so.9", "libcudnn.so")

#define PCNN_CUDNN_FORWARD(name, params, args)                                                \
  PCNN_DYNAMIC_FORWARD(cudnn_library(), cudnnStatus_t, name, CUDNN_STATUS_NOT_INITIALIZED, \
                       params, args)

PCNN_CUDNN_FORWARD(cudnnAddTensor, (cudnnHandle_t handle, const void* alpha,
                    const cudnnTensorDescriptor_t aDesc, const void* A, const void* beta,
                    const cudnnTensorDescriptor_t cDesc, void* C),
                   (handle, alpha, aDesc, A, beta, cDesc, C))
PCNN_CUDNN_FORWARD(cudnnCreate, (cudnnHandle_t* handle), (handle))
PCNN_CUDNN_FORWARD(cudnnDestroy, (cudnnHandle_t handle), (handle))

// The three convolution directions take their descriptors in one order: the two operands, the
// convolution, the result (Forward: x, w, y; BackwardData: w, dy, dx; BackwardFilter: x, dy, dw).
// Each row gives a direction's name, those three descriptor types, its algorithm enum and its
// performance record; every entry point of a direction has the same shape in those terms.
#define PCNN_CUDNN_CONV_DIRECTIONS(X)                                                        \
  X(Forward, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, cudnnTensorDescriptor_t,     \
    cudnnConvolutionFwdAlgo_t, cudnnConvolutionFwdAlgoPerf_t)                               \
  X(BackwardData, cudnnFilterDescriptor_t, cudnnTensorDescriptor_t, cudnnTensorDescriptor_t, \
    cudnnConvolutionBwdDataAlgo_t, cudnnConvolutionBwdDataAlgoPerf_t)                       \
  X(BackwardFilter, cudnnTensorDescriptor_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, \
    cudnnConvolutionBwdFilterAlgo_t, cudnnConvolutionBwdFilterAlgoPerf_t)

// The timed (Find...) and the heuristic (Get..._v7) algorithm search have one signature.
#define PCNN_CUDNN_ALGO_SEARCH(name, ADesc, BDesc, CDesc, Perf)                               \
  PCNN_CUDNN_FORWARD(name, (cudnnHandle_t handle, const ADesc aDesc, const BDesc bDesc,       \
                      const cudnnConvolutionDescriptor_t convDesc, const CDesc cDesc,         \
                      const int requestedAlgoCount, int* returnedAlgoCount, Perf* perfResults), \
                     (handle, aDesc, bDesc, convDesc, cDesc, requestedAlgoCount,              \
                      returnedAlgoCount, perfResults))

// A direction's run, its two algorithm searches (timed and heuristic), its workspace size and
// how many algorithms it has.
#define PCNN_CUDNN_CONV_DIRECTION(dir, ADesc, BDesc, CDesc, Algo, Perf)                       \
  PCNN_CUDNN_FORWARD(cudnnConvolution##dir, (cudnnHandle_t handle, const void* alpha,         \
                      const ADesc aDesc, const void* a, const BDesc bDesc, const void* b,     \
                      const cudnnConvolutionDescriptor_t convDesc, Algo algo, void* workSpace, \
                      size_t workSpaceSizeInBytes, const void* beta, const CDesc cDesc,       \
                      void* c),                                                               \
                     (handle, alpha, aDesc, a, bDesc, b, convDesc, algo, workSpace,           \
                      workSpaceSizeInBytes, beta, cDesc, c))                                  \
  PCNN_CUDNN_ALGO_SEARCH(cudnnFindConvolution##dir##Algorithm, ADesc, BDesc, CDesc, Perf)      \
  PCNN_CUDNN_ALGO_SEARCH(cudnnGetConvolution##dir##Algorithm_v7, ADesc, BDesc, CDesc, Perf)    \
  PCNN_CUDNN_FORWARD(cudnnGetConvolution##dir##WorkspaceSize, (cudnnHandle_t handle,          \
                      const ADesc aDesc, const BDesc bDesc,                                   \
                      const cudnnConvolutionDescriptor_t convDesc, const CDesc cDesc,         \
                      Algo algo, size_t* sizeInBytes),                                        \
                     (handle, aDesc, bDesc, convDesc, cDesc, algo, sizeInBytes))              \
  PCNN_CUDNN_FORWARD(cudnnGetConvolution##dir##AlgorithmMaxCount,                             \
                     (cudnnHandle_t handle, int* count), (handle, count))

PCNN_CUDNN_CONV_DIRECTIONS(PCNN_CUDNN_CONV_DIRECTION)

// The descriptor kinds the backend makes, each created and destroyed.
#define PCNN_CUDNN_DESCRIPTOR_KINDS(X) X(Convolution) X(Filter) X(Pooling) X(Tensor)
#define PCNN_CUDNN_DESCRIPTOR_LIFETIME(kind)                                                  \
  PCNN_CUDNN_FORWARD(cudnnCreate##kind##Descriptor, (cudnn##kind##Descriptor_t * desc), (desc)) \
  PCNN_CUDNN_FORWARD(cudnnDestroy##kind##Descriptor, (cudnn##kind##Descriptor_t desc), (desc))

PCNN_CUDNN_DESCRIPTOR_KINDS(PCNN_CUDNN_DESCRIPTOR_LIFETIME)

// Batch normalisation (spatial): training, inference and backward.
PCNN_CUDNN_FORWARD(cudnnBatchNormalizationBackward, (cudnnHandle_t handle,
                    cudnnBatchNormMode_t mode, const void* alphaDataDiff, const void* betaDataDiff,
                    const void* alphaParamDiff, const void* betaParamDiff,
                    const cudnnTensorDescriptor_t xDesc, const void* x,
                    const cudnnTensorDescriptor_t dyDesc, const void* dy,
                    const cudnnTensorDescriptor_t dxDesc, void* dx,
                    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void* bnScale,
                    void* dBnScaleResult, void* dBnBiasResult, double epsilon,
                    const void* savedMean, const void* savedInvVariance),
                   (handle, mode, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff,
                    xDesc, x, dyDesc, dy, dxDesc, dx, dBnScaleBiasDesc, bnScale, dBnScaleResult,
                    dBnBiasResult, epsilon, savedMean, savedInvVariance))
// The two forwards begin alike: mode, scaling, x and y, then the per-channel scale and bias.
#define PCNN_CUDNN_BN_FORWARD_PARAMS                                                             \
  cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,         \
      const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t yDesc,  \
      void* y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale,       \
      const void* bnBias
#define PCNN_CUDNN_BN_FORWARD_ARGS \
  handle, mode, alpha, beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc, bnScale, bnBias
PCNN_CUDNN_FORWARD(cudnnBatchNormalizationForwardInference, (PCNN_CUDNN_BN_FORWARD_PARAMS,
                    const void* estimatedMean, const void* estimatedVariance, double epsilon),
                   (PCNN_CUDNN_BN_FORWARD_ARGS, estimatedMean, estimatedVariance, epsilon))
PCNN_CUDNN_FORWARD(cudnnBatchNormalizationForwardTraining, (PCNN_CUDNN_BN_FORWARD_PARAMS,
                    double exponentialAverageFactor, void* resultRunningMean,
                    void* resultRunningVariance, double epsilon, void* resultSaveMean,
                    void* resultSaveInvVariance),
                   (PCNN_CUDNN_BN_FORWARD_ARGS, exponentialAverageFactor, resultRunningMean,
                    resultRunningVariance, epsilon, resultSaveMean, resultSaveInvVariance))
#undef PCNN_CUDNN_BN_FORWARD_PARAMS
#undef PCNN_CUDNN_BN_FORWARD_ARGS

PCNN_CUDNN_FORWARD(cudnnGetConvolution2dForwardOutputDim, (
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnTensorDescriptor_t inputTensorDesc,
                    const cudnnFilterDescriptor_t filterDesc, int* n, int* c, int* h, int* w),
                   (convDesc, inputTensorDesc, filterDesc, n, c, h, w))
PCNN_CUDNN_FORWARD(cudnnPoolingBackward, (cudnnHandle_t handle,
                    const cudnnPoolingDescriptor_t poolingDesc, const void* alpha,
                    const cudnnTensorDescriptor_t yDesc, const void* y,
                    const cudnnTensorDescriptor_t dyDesc, const void* dy,
                    const cudnnTensorDescriptor_t xDesc, const void* x, const void* beta,
                    const cudnnTensorDescriptor_t dxDesc, void* dx),
                   (handle, poolingDesc, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx))
PCNN_CUDNN_FORWARD(cudnnPoolingForward, (cudnnHandle_t handle,
                    const cudnnPoolingDescriptor_t poolingDesc, const void* alpha,
                    const cudnnTensorDescriptor_t xDesc, const void* x, const void* beta,
                    const cudnnTensorDescriptor_t yDesc, void* y),
                   (handle, poolingDesc, alpha, xDesc, x, beta, yDesc, y))
PCNN_CUDNN_FORWARD(cudnnSetConvolution2dDescriptor, (cudnnConvolutionDescriptor_t convDesc,
                    int pad_h, int pad_w, int u, int v, int dilation_h, int dilation_w,
                    cudnnConvolutionMode_t mode, cudnnDataType_t computeType),
                   (convDesc, pad_h, pad_w, u, v, dilation_h, dilation_w, mode, computeType))
PCNN_CUDNN_FORWARD(cudnnSetConvolutionMathType, (cudnnConvolutionDescriptor_t convDesc,
                    cudnnMathType_t mathType),
                   (convDesc, mathType))
PCNN_CUDNN_FORWARD(cudnnSetFilter4dDescriptor, (cudnnFilterDescriptor_t filterDesc,
                    cudnnDataType_t dataType, cudnnTensorFormat_t format, int k, int c, int h,
                    int w),
                   (filterDesc, dataType, format, k, c, h, w))
PCNN_CUDNN_FORWARD(cudnnSetPooling2dDescriptor, (cudnnPoolingDescriptor_t poolingDesc,
                    cudnnPoolingMode_t mode, cudnnNanPropagation_t maxpoolingNanOpt,
                    int windowHeight, int windowWidth, int verticalPadding, int horizontalPadding,
                    int verticalStride, int horizontalStride),
                   (poolingDesc, mode, maxpoolingNanOpt, windowHeight, windowWidth,
                    verticalPadding, horizontalPadding, verticalStride, horizontalStride))
PCNN_CUDNN_FORWARD(cudnnSetStream, (cudnnHandle_t handle, cudaStream_t streamId),
                   (handle, streamId))
PCNN_CUDNN_FORWARD(cudnnSetTensor4dDescriptor, (cudnnTensorDescriptor_t tensorDesc,
                    cudnnTensorFormat_t format, cudnnDataType_t dataType, int n, int c, int h,
                    int w),
                   (tensorDesc, format, dataType, n, c, h, w))

PCNN_DYNAMIC_FORWARD(cudnn_library(), size_t, cudnnGetVersion, size_t(0), (), ())

PCNN_DYNAMIC_ERROR_STRING(cudnn_library(), "cuDNN", cudnnGetErrorString, cudnnStatus_t)

extern "C" void cudnnGetLastErrorString(char* message, size_t max_size) {
  using Fn = void (*)(char*, size_t);
  static const Fn fn = cudnn_library().symbol<Fn>("cudnnGetLastErrorString");
  if (fn) return fn(message, max_size);
  if (max_size > 0) message[0] = '\0';
}
