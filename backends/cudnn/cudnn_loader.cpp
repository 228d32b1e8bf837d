// cuDNN, opened only when a cudnn backend is created (backends/cuda/dynamic_library.hpp says
// why): this file defines every cuDNN entry point the backend calls and forwards each to the
// library opened on first use. Without the library, cudnnCreate fails with a message naming it
// and the backend reports itself unusable; no other entry point is reached before that.
#include <cudnn.h>

#include <string>

#include "backends/cuda/dynamic_library.hpp"

namespace {

#ifndef PCNN_CUDNN_LIBRARY
#define PCNN_CUDNN_LIBRARY "libcudnn.so"
#endif

const pcnn::cuda::DynamicLibrary& cudnn_library() {
  // The library this build was configured with, then whatever the loader finds by soname.
  static const pcnn::cuda::DynamicLibrary lib{PCNN_CUDNN_LIBRARY, "libcudnn.so.9", "libcudnn.so"};
  return lib;
}

}  // namespace

#define PCNN_CUDNN_FORWARD(name, params, args)                                                \
  PCNN_DYNAMIC_FORWARD(cudnn_library(), cudnnStatus_t, name, CUDNN_STATUS_NOT_INITIALIZED, \
                       params, args)

PCNN_CUDNN_FORWARD(cudnnAddTensor, (cudnnHandle_t handle, const void* alpha,
                    const cudnnTensorDescriptor_t aDesc, const void* A, const void* beta,
                    const cudnnTensorDescriptor_t cDesc, void* C),
                   (handle, alpha, aDesc, A, beta, cDesc, C))
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
PCNN_CUDNN_FORWARD(cudnnBatchNormalizationForwardInference, (cudnnHandle_t handle,
                    cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
                    const cudnnTensorDescriptor_t xDesc, const void* x,
                    const cudnnTensorDescriptor_t yDesc, void* y,
                    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale,
                    const void* bnBias, const void* estimatedMean, const void* estimatedVariance,
                    double epsilon),
                   (handle, mode, alpha, beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc, bnScale,
                    bnBias, estimatedMean, estimatedVariance, epsilon))
PCNN_CUDNN_FORWARD(cudnnBatchNormalizationForwardTraining, (cudnnHandle_t handle,
                    cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
                    const cudnnTensorDescriptor_t xDesc, const void* x,
                    const cudnnTensorDescriptor_t yDesc, void* y,
                    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale,
                    const void* bnBias, double exponentialAverageFactor, void* resultRunningMean,
                    void* resultRunningVariance, double epsilon, void* resultSaveMean,
                    void* resultSaveInvVariance),
                   (handle, mode, alpha, beta, xDesc, x, yDesc, y, bnScaleBiasMeanVarDesc, bnScale,
                    bnBias, exponentialAverageFactor, resultRunningMean, resultRunningVariance,
                    epsilon, resultSaveMean, resultSaveInvVariance))
PCNN_CUDNN_FORWARD(cudnnConvolutionBackwardData, (cudnnHandle_t handle, const void* alpha,
                    const cudnnFilterDescriptor_t wDesc, const void* w,
                    const cudnnTensorDescriptor_t dyDesc, const void* dy,
                    const cudnnConvolutionDescriptor_t convDesc,
                    cudnnConvolutionBwdDataAlgo_t algo, void* workSpace,
                    size_t workSpaceSizeInBytes, const void* beta,
                    const cudnnTensorDescriptor_t dxDesc, void* dx),
                   (handle, alpha, wDesc, w, dyDesc, dy, convDesc, algo, workSpace,
                    workSpaceSizeInBytes, beta, dxDesc, dx))
PCNN_CUDNN_FORWARD(cudnnConvolutionBackwardFilter, (cudnnHandle_t handle, const void* alpha,
                    const cudnnTensorDescriptor_t xDesc, const void* x,
                    const cudnnTensorDescriptor_t dyDesc, const void* dy,
                    const cudnnConvolutionDescriptor_t convDesc,
                    cudnnConvolutionBwdFilterAlgo_t algo, void* workSpace,
                    size_t workSpaceSizeInBytes, const void* beta,
                    const cudnnFilterDescriptor_t dwDesc, void* dw),
                   (handle, alpha, xDesc, x, dyDesc, dy, convDesc, algo, workSpace,
                    workSpaceSizeInBytes, beta, dwDesc, dw))
PCNN_CUDNN_FORWARD(cudnnConvolutionForward, (cudnnHandle_t handle, const void* alpha,
                    const cudnnTensorDescriptor_t xDesc, const void* x,
                    const cudnnFilterDescriptor_t wDesc, const void* w,
                    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                    void* workSpace, size_t workSpaceSizeInBytes, const void* beta,
                    const cudnnTensorDescriptor_t yDesc, void* y),
                   (handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace,
                    workSpaceSizeInBytes, beta, yDesc, y))
PCNN_CUDNN_FORWARD(cudnnCreate, (cudnnHandle_t* handle),
                   (handle))
PCNN_CUDNN_FORWARD(cudnnCreateConvolutionDescriptor, (cudnnConvolutionDescriptor_t* convDesc),
                   (convDesc))
PCNN_CUDNN_FORWARD(cudnnCreateFilterDescriptor, (cudnnFilterDescriptor_t* filterDesc),
                   (filterDesc))
PCNN_CUDNN_FORWARD(cudnnCreatePoolingDescriptor, (cudnnPoolingDescriptor_t* poolingDesc),
                   (poolingDesc))
PCNN_CUDNN_FORWARD(cudnnCreateTensorDescriptor, (cudnnTensorDescriptor_t* tensorDesc),
                   (tensorDesc))
PCNN_CUDNN_FORWARD(cudnnDestroy, (cudnnHandle_t handle),
                   (handle))
PCNN_CUDNN_FORWARD(cudnnDestroyConvolutionDescriptor, (cudnnConvolutionDescriptor_t convDesc),
                   (convDesc))
PCNN_CUDNN_FORWARD(cudnnDestroyFilterDescriptor, (cudnnFilterDescriptor_t filterDesc),
                   (filterDesc))
PCNN_CUDNN_FORWARD(cudnnDestroyPoolingDescriptor, (cudnnPoolingDescriptor_t poolingDesc),
                   (poolingDesc))
PCNN_CUDNN_FORWARD(cudnnDestroyTensorDescriptor, (cudnnTensorDescriptor_t tensorDesc),
                   (tensorDesc))
PCNN_CUDNN_FORWARD(cudnnFindConvolutionBackwardDataAlgorithm, (cudnnHandle_t handle,
                    const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
                    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults),
                   (handle, wDesc, dyDesc, convDesc, dxDesc, requestedAlgoCount, returnedAlgoCount,
                    perfResults))
PCNN_CUDNN_FORWARD(cudnnFindConvolutionBackwardFilterAlgorithm, (cudnnHandle_t handle,
                    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
                    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults),
                   (handle, xDesc, dyDesc, convDesc, dwDesc, requestedAlgoCount, returnedAlgoCount,
                    perfResults))
PCNN_CUDNN_FORWARD(cudnnFindConvolutionForwardAlgorithm, (cudnnHandle_t handle,
                    const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
                    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults),
                   (handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, returnedAlgoCount,
                    perfResults))
PCNN_CUDNN_FORWARD(cudnnGetConvolution2dForwardOutputDim, (
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnTensorDescriptor_t inputTensorDesc,
                    const cudnnFilterDescriptor_t filterDesc, int* n, int* c, int* h, int* w),
                   (convDesc, inputTensorDesc, filterDesc, n, c, h, w))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionBackwardDataAlgorithmMaxCount, (cudnnHandle_t handle,
                    int* count),
                   (handle, count))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionBackwardDataAlgorithm_v7, (cudnnHandle_t handle,
                    const cudnnFilterDescriptor_t filterDesc,
                    const cudnnTensorDescriptor_t diffDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
                    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults),
                   (handle, filterDesc, diffDesc, convDesc, gradDesc, requestedAlgoCount,
                    returnedAlgoCount, perfResults))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionBackwardDataWorkspaceSize, (cudnnHandle_t handle,
                    const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnTensorDescriptor_t dxDesc, cudnnConvolutionBwdDataAlgo_t algo,
                    size_t* sizeInBytes),
                   (handle, wDesc, dyDesc, convDesc, dxDesc, algo, sizeInBytes))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount, (cudnnHandle_t handle,
                    int* count),
                   (handle, count))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionBackwardFilterAlgorithm_v7, (cudnnHandle_t handle,
                    const cudnnTensorDescriptor_t srcDesc, const cudnnTensorDescriptor_t diffDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
                    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults),
                   (handle, srcDesc, diffDesc, convDesc, gradDesc, requestedAlgoCount,
                    returnedAlgoCount, perfResults))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionBackwardFilterWorkspaceSize, (cudnnHandle_t handle,
                    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnFilterDescriptor_t gradDesc, cudnnConvolutionBwdFilterAlgo_t algo,
                    size_t* sizeInBytes),
                   (handle, xDesc, dyDesc, convDesc, gradDesc, algo, sizeInBytes))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionForwardAlgorithmMaxCount, (cudnnHandle_t handle, int* count),
                   (handle, count))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionForwardAlgorithm_v7, (cudnnHandle_t handle,
                    const cudnnTensorDescriptor_t srcDesc,
                    const cudnnFilterDescriptor_t filterDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
                    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults),
                   (handle, srcDesc, filterDesc, convDesc, destDesc, requestedAlgoCount,
                    returnedAlgoCount, perfResults))
PCNN_CUDNN_FORWARD(cudnnGetConvolutionForwardWorkspaceSize, (cudnnHandle_t handle,
                    const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
                    const cudnnConvolutionDescriptor_t convDesc,
                    const cudnnTensorDescriptor_t yDesc, cudnnConvolutionFwdAlgo_t algo,
                    size_t* sizeInBytes),
                   (handle, xDesc, wDesc, convDesc, yDesc, algo, sizeInBytes))
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

extern "C" const char* cudnnGetErrorString(cudnnStatus_t status) {
  using Fn = const char* (*)(cudnnStatus_t);
  static const Fn fn = cudnn_library().symbol<Fn>("cudnnGetErrorString");
  if (fn) return fn(status);
  static const std::string missing = "the cuDNN library could not be loaded (" +
                                     cudnn_library().error() + ")";
  return missing.c_str();
}

extern "C" void cudnnGetLastErrorString(char* message, size_t max_size) {
  using Fn = void (*)(char*, size_t);
  static const Fn fn = cudnn_library().symbol<Fn>("cudnnGetLastErrorString");
  if (fn) return fn(message, max_size);
  if (max_size > 0) message[0] = '\0';
}
