# `cmake --install`: the libraries (static), the public headers under include/pcnn/ (in the
# source tree's folder layout, so "core/..." and <pcnn/pcnn.hpp> both resolve), the pcnn tool,
# and a CMake package: find_package(pcnn) gives pcnn::pcnn with every compiled-in backend, and
# pcnn_BACKENDS lists them (also as components: find_package(pcnn REQUIRED COMPONENTS cuda)).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PCNN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/pcnn CACHE STRING
    "Where the pcnn CMake package is installed (relative to the prefix)")

# Exported names: pcnn::pcnn, pcnn::core, pcnn::contract, pcnn::backends, pcnn::backend_<name>.
set(pcnn_exported pcnn pcnn_core pcnn_contract pcnn_backends)
set_target_properties(pcnn_core PROPERTIES EXPORT_NAME core)
set_target_properties(pcnn_contract PROPERTIES EXPORT_NAME contract)
set_target_properties(pcnn_backends PROPERTIES EXPORT_NAME backends)
foreach(name IN LISTS PCNN_COMPILED_BACKENDS)
  set_target_properties(pcnn_backend_${name} PROPERTIES EXPORT_NAME backend_${name})
  list(APPEND pcnn_exported pcnn_backend_${name})
endforeach()
# INCLUDES: every exported target's include path, installed.
install(TARGETS ${pcnn_exported} EXPORT pcnnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${CMAKE_INSTALL_INCLUDEDIR}/pcnn)
install(TARGETS pcnn_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers: what the library's own headers include, nothing of a backend's insides.
install(DIRECTORY api core layers models data train report
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pcnn
        FILES_MATCHING PATTERN "*.hpp")
file(GLOB pcnn_contract_headers ${PROJECT_SOURCE_DIR}/backends/*.hpp)
install(FILES ${pcnn_contract_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pcnn/backends)
install(FILES include/pcnn/pcnn.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pcnn)
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pcnn)
# The built-in models as files of the format users write (docs/model-format.md): a starting point
# for their own, and `--model PREFIX/share/pcnn/models/lenet5.json` is the built-in lenet5.
install(DIRECTORY models/builtin/ DESTINATION ${CMAKE_INSTALL_DATADIR}/pcnn/models
        FILES_MATCHING PATTERN "*.json")
install(FILES docs/model-format.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pcnn)

install(EXPORT pcnnTargets NAMESPACE pcnn:: DESTINATION ${PCNN_INSTALL_CMAKEDIR})
# What the package config needs to find again: the dependencies of the static archives.
set(PCNN_CONFIG_BACKENDS ${PCNN_COMPILED_BACKENDS})
set(PCNN_CONFIG_KOKKOS_DIR "")
if(Kokkos_DIR)
  get_filename_component(PCNN_CONFIG_KOKKOS_DIR "${Kokkos_DIR}" REALPATH)  # not via .deps links
endif()
set(PCNN_CONFIG_CUDA_ROOT "")
if(CUDAToolkit_BIN_DIR)
  get_filename_component(PCNN_CONFIG_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(cmake/pcnnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pcnnConfig.cmake INSTALL_DESTINATION ${PCNN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pcnnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pcnnConfig.cmake ${PROJECT_BINARY_DIR}/pcnnConfigVersion.cmake
        DESTINATION ${PCNN_INSTALL_CMAKEDIR})
