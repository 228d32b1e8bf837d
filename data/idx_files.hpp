// Several IDX files read at once, one thread each: gzip inflates on one core per stream, and a
// data set's files are independent, so the wall time is the largest file's, not the sum.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "data/idx.hpp"

namespace pcnn {

// When one file was read, for the run's phase timings.
struct FileLoad {
  std::string path;
  std::chrono::steady_clock::time_point start, end;
  bool cached = false;  // read from the decoded-data cache, not decoded
};

// read_idx of every path, concurrently. Every thread is joined before anything is thrown; the
// error thrown is that of the first failing path in the given order (the same one whatever
// the threads' timing). loads, where given, gets one entry per path, in order. With a
// cache_dir, each file goes through the decoded-data cache (data/idx_cache.hpp).
std::vector<IdxArray> read_idx_files(const std::vector<std::string>& paths,
                                     std::vector<FileLoad>* loads = nullptr,
                                     const std::string& cache_dir = "");

}  // namespace pcnn
