# The CTest `backend_names`: no C++ or CUDA source outside backends/ and tests/ names a backend in
# a string literal (`name == "cuda"`, a table of pairs, `make_backend("serial")`): code outside
# backends/ asks the registry (backends/registry.hpp) for traits instead, so that a new backend is
# its folder plus one line of CMakeLists.txt. tests/ may name the backends it tests on purpose.
#   cmake -DROOT=<source dir> -DNAMES="serial|openmp|..." -P CheckBackendNames.cmake
if(NOT ROOT OR NOT NAMES)
  message(FATAL_ERROR "usage: cmake -DROOT=<dir> -DNAMES=a|b|c -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
set(literal "\"(${NAMES})\"")
file(GLOB top RELATIVE ${ROOT} ${ROOT}/*)
set(found 0)
set(checked 0)
foreach(dir IN LISTS top)
  # Not: the backends and tests, hidden folders, files at the top, build trees.
  if(dir MATCHES "^(backends|tests|\\..*)$" OR NOT IS_DIRECTORY ${ROOT}/${dir}
     OR EXISTS ${ROOT}/${dir}/CMakeCache.txt)
    continue()
  endif()
  file(GLOB_RECURSE sources ${ROOT}/${dir}/*.cpp ${ROOT}/${dir}/*.hpp ${ROOT}/${dir}/*.h
       ${ROOT}/${dir}/*.cu ${ROOT}/${dir}/*.cuh)
  foreach(f IN LISTS sources)
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${f} hits REGEX "${literal}")
    foreach(line IN LISTS hits)
      string(STRIP "${line}" line)
      if(line MATCHES "^(//|/?\\*)")  # comments may name backends
        continue()
      endif()
      file(RELATIVE_PATH rel ${ROOT} ${f})
      message("${rel}: names a backend: ${line}")
      math(EXPR found "${found} + 1")
    endforeach()
  endforeach()
endforeach()
if(found GREATER 0)
  message(FATAL_ERROR "${found} line(s) outside backends/ and tests/ name a backend: ask the "
                      "registry's traits (backends/registry.hpp) instead")
endif()
message("backend_names: ${checked} sources outside backends/ and tests/ name no backend")
