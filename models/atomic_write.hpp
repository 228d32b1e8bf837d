// Writing a file so that a crash at any instant leaves either the old file or the new one whole.
#pragma once

#include <string>

namespace pcnn {

// Writes bytes to PATH.tmp in the same folder, fsyncs it, renames it over path and fsyncs the
// folder (so the rename itself survives a power cut). A kill before the rename leaves the old
// file and a stale PATH.tmp, which the next write replaces. Throws Error naming the failing step.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace pcnn
