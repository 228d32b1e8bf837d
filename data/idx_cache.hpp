// A cache of decoded IDX files: inflating Fashion-MNIST's training images takes 0.3 s or more,
// reading the 47 MB they inflate to takes a few hundredths. An entry is keyed by the file's
// path, size and modification time, and checked whole (its own header, sizes and a CRC-32 of
// the payload) before a byte of it is used; anything amiss and the file is decoded again.
#pragma once

#include <string>

#include "data/idx.hpp"

namespace pcnn {

// $PCNN_CACHE_DIR, else $XDG_CACHE_HOME/pcnn, else $HOME/.cache/pcnn; "" when none is set.
std::string default_idx_cache_dir();

// read_idx(path) through the cache in cache_dir (created if missing). A usable entry is
// returned as it is; otherwise the file is decoded (its errors thrown as read_idx throws them)
// and the entry written atomically; a cache that cannot be written is passed by in silence.
// hit, where given, says whether the entry was used.
IdxArray read_idx_cached(const std::string& path, const std::string& cache_dir,
                         bool* hit = nullptr);

}  // namespace pcnn
