# Third-party pieces: zlib, nlohmann-json, CLI11 (and doctest for the tests), from their CMake
# packages when installed, else from headers found under PCNN_EXTRA_INCLUDE_DIR.
set(PCNN_EXTRA_INCLUDE_DIR "" CACHE PATH "Folder with CLI/, nlohmann/, doctest/ and zlib.h headers")

find_package(ZLIB QUIET)
if(NOT ZLIB_FOUND)
  find_path(PCNN_ZLIB_INCLUDE zlib.h HINTS ${PCNN_EXTRA_INCLUDE_DIR})
  find_library(PCNN_ZLIB_LIB NAMES z libz.so.1 HINTS /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu)
  if(NOT PCNN_ZLIB_INCLUDE OR NOT PCNN_ZLIB_LIB)
    message(FATAL_ERROR "zlib not found: run scripts/setup.sh (installs zlib1g-dev)")
  endif()
  add_library(ZLIB::ZLIB UNKNOWN IMPORTED)
  set_target_properties(ZLIB::ZLIB PROPERTIES IMPORTED_LOCATION ${PCNN_ZLIB_LIB}
                        INTERFACE_INCLUDE_DIRECTORIES ${PCNN_ZLIB_INCLUDE})
endif()

# pcnn_header_only(TARGET HEADER PACKAGE): an imported target from a package or a bare header.
macro(pcnn_header_only target header package)
  if(NOT TARGET ${target})
    find_package(${package} QUIET)
  endif()
  if(NOT TARGET ${target})
    find_path(pcnn_${package}_include ${header} HINTS ${PCNN_EXTRA_INCLUDE_DIR})
    if(NOT pcnn_${package}_include)
      message(FATAL_ERROR "${package} not found: run scripts/setup.sh (installs its Debian package)")
    endif()
    add_library(${target} INTERFACE IMPORTED)
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${pcnn_${package}_include})
  endif()
endmacro()

pcnn_header_only(nlohmann_json::nlohmann_json nlohmann/json.hpp nlohmann_json)
pcnn_header_only(CLI11::CLI11 CLI/CLI.hpp CLI11)
if(PCNN_BUILD_TESTS)
  pcnn_header_only(doctest::doctest doctest/doctest.h doctest)
endif()
