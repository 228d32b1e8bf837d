// read_idx_files: a thread per file, errors kept per file and rethrown in path order.
#include "data/idx_files.hpp"

#include "data/idx_cache.hpp"

#include <exception>
#include <system_error>
#include <system_error>
#include <thread>

namespace pcnn {

std::vector<IdxArray> read_idx_files(const std::vector<std::string>& paths,
                                     std::vector<FileLoad>* loads,
                                     const std::string& cache_dir) {
  const size_t n = paths.size();
  std::vector<IdxArray> arrays(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<FileLoad> times(n);
  const auto read_one = [&](size_t i) {
    times[i].path = paths[i];
    times[i].start = std::chrono::steady_clock::now();
    try {
      arrays[i] = cache_dir.empty() ? read_idx(paths[i])
                                    : read_idx_cached(paths[i], cache_dir, &times[i].cached);
    } catch (...) {
      errors[i] = std::current_exception();
    }
    times[i].end = std::chrono::steady_clock::now();
  };
  std::vector<std::thread> threads;
  try {
    for (size_t i = 1; i < n; ++i) threads.emplace_back(read_one, i);
  } catch (const std::system_error&) {
    // No thread to be had: the rest is read here, in order, below.
  }
  read_one(0);  // the caller's thread takes the first (the largest, in a data set's order)
  for (size_t i = threads.size() + 1; i < n; ++i) read_one(i);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  if (loads) *loads = std::move(times);
  return arrays;
}

}  // namespace pcnn
