// Reading a saved file (a model, a checkpoint) whole before it is decoded, with its size checked
// first: a folder, a device or a file larger than any the program writes gets one line naming
// it, not an endless read or an allocation of its size.
#pragma once

#include <cstdint>
#include <string>

namespace pcnn {

// The bytes of the regular file at path, at most max_bytes of them. Throws Error with one line
// naming `what` (as in "cannot open <what> '<path>'") and the path when it cannot.
std::string read_whole_file(const std::string& path, const std::string& what, uint64_t max_bytes);

}  // namespace pcnn
