# CUDA for the cuda and cudnn backends: sm_90 machine code plus compute_90 PTX for newer GPUs.
if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)  # "90" = sm_90 SASS + compute_90 PTX
endif()
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
find_package(CUDAToolkit REQUIRED)

# cuDNN ships beside the toolkit on these machines; look there and in the usual places.
find_path(PCNN_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
find_library(PCNN_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
if(PCNN_CUDNN_INCLUDE_DIR AND PCNN_CUDNN_LIBRARY)
  set(PCNN_CUDNN_FOUND TRUE)
else()
  set(PCNN_CUDNN_FOUND FALSE)
  message(STATUS "cuDNN not found: the cudnn backend is not built")
endif()
