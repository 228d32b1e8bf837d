// ParallelCNN's public API, in one include: #include <pcnn/pcnn.hpp>, link pcnn::pcnn.
// The facade (pcnn::api) is in api/pcnn.hpp; the classes it wraps (core/, backends/, layers/,
// models/, data/, train/) are installed beside it and reachable as "models/model.hpp" etc.
#pragma once

#include "api/pcnn.hpp"
