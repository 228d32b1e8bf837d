// Output files checked before training starts, so that a long run does not end in "cannot
// write": the folder must exist and take a new file, and an existing file must be a writable
// regular file.
#pragma once

#include <string>

namespace pcnn::cli {

// Throws Error "--save: ..." (the option named first) when path cannot be written. Creates a
// probe file in the folder and removes it again: nothing is left behind.
void check_output_path(const std::string& option, const std::string& path);

}  // namespace pcnn::cli
