// How this program was built, for result files: the compiler, its flags and the build type as
// CMake configured them (bench/CMakeLists.txt hands them to build_info.cpp alone).
#pragma once

#include <string>

namespace pcnn::bench {

struct BuildInfo {
  std::string compiler;    // e.g. "GNU 12.2.0"
  std::string flags;       // CMAKE_CXX_FLAGS, those of the build type, the project's options
  std::string build_type;  // e.g. "Release" ("" when none was set)
};

BuildInfo build_info();

}  // namespace pcnn::bench
