// What `pcnn --version` prints.
#pragma once

#include <string>

namespace pcnn::cli {

// "pcnn 0.1 (commit 2c9dbda)" and a second line naming the backends compiled in.
std::string version_text();

}  // namespace pcnn::cli
