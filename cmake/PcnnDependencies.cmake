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

# libpng and libjpeg(-turbo) read folder-of-images data sets (data/image_file.cpp). Each is
# optional: without it, a PNG (or JPEG) file is an error saying pcnn was built without it. As for
# zlib, where only headers and the shared library are at hand (the GPU machine: scripts/device/
# bundle.sh copies them into PCNN_EXTRA_INCLUDE_DIR and the lib/ folder beside it), those serve.
# pcnn_image_library(TARGET PACKAGE HEADER NAMES...): the package's target, or one made from
# the header and the library found.
macro(pcnn_image_library target package header)
  find_package(${package} QUIET)
  if(NOT TARGET ${target})
    find_path(pcnn_${package}_include ${header} HINTS ${PCNN_EXTRA_INCLUDE_DIR})
    find_library(pcnn_${package}_lib NAMES ${ARGN}
                 HINTS ${PCNN_EXTRA_INCLUDE_DIR}/../lib /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu)
    if(pcnn_${package}_include AND pcnn_${package}_lib)
      add_library(${target} UNKNOWN IMPORTED)
      set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${pcnn_${package}_lib}
                            INTERFACE_INCLUDE_DIRECTORIES ${pcnn_${package}_include})
    endif()
  endif()
  if(TARGET ${target})
    set(PCNN_HAVE_${package} ON)
  else()
    set(PCNN_HAVE_${package} OFF)
    message(STATUS "${package} not found: image folders cannot hold its files "
                   "(scripts/setup.sh installs it)")
  endif()
endmacro()
pcnn_image_library(PNG::PNG PNG png.h png16 libpng16.so.16)
pcnn_image_library(JPEG::JPEG JPEG jpeglib.h jpeg libjpeg.so.62)
