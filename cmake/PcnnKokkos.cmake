# Finds the Kokkos the kokkos backend is built against and sets PCNN_KOKKOS_FOUND.
#   PCNN_KOKKOS_FLAVOR=host (default): Kokkos with OpenMP (and Serial), compiled by the host C++
#     compiler; looked for in Kokkos_ROOT, then .deps/kokkos-host (scripts/build_kokkos.sh host),
#     then the system.
#   PCNN_KOKKOS_FLAVOR=cuda: Kokkos with CUDA (scripts/build_kokkos.sh cuda -> .deps/kokkos-cuda);
#     only the pcnn_backend_kokkos sources are then compiled by nvcc_wrapper
#     (backends/kokkos/CMakeLists.txt), everything else keeps the project's compilers.
# No Kokkos with the needed execution space: the backend is simply not built.
set(PCNN_KOKKOS_FLAVOR "host" CACHE STRING "Which Kokkos the kokkos backend uses: host or cuda")
set_property(CACHE PCNN_KOKKOS_FLAVOR PROPERTY STRINGS host cuda)
set(PCNN_KOKKOS_FOUND FALSE)
# Switching flavours in an existing build folder: forget the Kokkos found for the other one.
if(DEFINED PCNN_KOKKOS_FLAVOR_USED AND NOT PCNN_KOKKOS_FLAVOR_USED STREQUAL PCNN_KOKKOS_FLAVOR)
  unset(Kokkos_DIR CACHE)
endif()
set(PCNN_KOKKOS_FLAVOR_USED "${PCNN_KOKKOS_FLAVOR}" CACHE INTERNAL "flavour of the Kokkos found")

if(PCNN_KOKKOS_FLAVOR STREQUAL "host")
  set(pcnn_kokkos_device OPENMP)
elseif(PCNN_KOKKOS_FLAVOR STREQUAL "cuda")
  set(pcnn_kokkos_device CUDA)
else()
  message(FATAL_ERROR "PCNN_KOKKOS_FLAVOR must be host or cuda, not '${PCNN_KOKKOS_FLAVOR}'")
endif()

if(pcnn_kokkos_device STREQUAL "CUDA")
  # Kokkos' config defines CUDA::cudart with a path from the machine it was built on unless the
  # target exists: find this machine's toolkit first (the cuda backend then reuses it).
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    message(STATUS "Kokkos (cuda): no CUDA toolkit found; the kokkos backend is not built")
    return()
  endif()
endif()

# separable_compilation: Kokkos must not redirect every compile of the project to nvcc_wrapper.
find_package(Kokkos CONFIG QUIET COMPONENTS separable_compilation
             HINTS ${Kokkos_ROOT} ${PROJECT_SOURCE_DIR}/.deps/kokkos-${PCNN_KOKKOS_FLAVOR})

if(NOT Kokkos_FOUND)
  message(STATUS "Kokkos (${PCNN_KOKKOS_FLAVOR}) not found: the kokkos backend is not built "
                 "(scripts/build_kokkos.sh ${PCNN_KOKKOS_FLAVOR} builds it into "
                 ".deps/kokkos-${PCNN_KOKKOS_FLAVOR})")
  return()
endif()
if(NOT pcnn_kokkos_device IN_LIST Kokkos_DEVICES)
  message(STATUS "Kokkos at ${Kokkos_DIR} has no ${pcnn_kokkos_device} (devices: "
                 "${Kokkos_DEVICES}): the kokkos backend is not built")
  return()
endif()
if(PCNN_KOKKOS_FLAVOR STREQUAL "host" AND "CUDA" IN_LIST Kokkos_DEVICES)
  message(STATUS "Kokkos at ${Kokkos_DIR} is a CUDA build; use -DPCNN_KOKKOS_FLAVOR=cuda. "
                 "The kokkos backend is not built")
  return()
endif()

if(pcnn_kokkos_device STREQUAL "CUDA")
  # Kokkos asks for nvcc's -arch=sm_XX on every link that uses it; our links are done by the host
  # compiler (no relocatable device code), which rejects it. Keep only -fopenmp.
  get_target_property(pcnn_kokkos_link_opts Kokkos::kokkoscore INTERFACE_LINK_OPTIONS)
  if(pcnn_kokkos_link_opts)
    string(REGEX REPLACE ";?-arch=[a-z_0-9]+" "" pcnn_kokkos_link_opts "${pcnn_kokkos_link_opts}")
    string(REPLACE "-DKOKKOS_DEPENDENCE;" "" pcnn_kokkos_link_opts "${pcnn_kokkos_link_opts}")
    set_target_properties(Kokkos::kokkoscore PROPERTIES
                          INTERFACE_LINK_OPTIONS "${pcnn_kokkos_link_opts}")
  endif()
  # The runtime: Kokkos links CUDA::cuda_driver and CUDA::cudart, which are this machine's
  # toolkit (found above), the same shared libcudart the cuda and cudnn backends link.
endif()

set(PCNN_KOKKOS_FOUND TRUE)
message(STATUS "Kokkos ${Kokkos_VERSION} (${PCNN_KOKKOS_FLAVOR}; ${Kokkos_DEVICES}) at ${Kokkos_DIR}")
