// Where a saved model came from: the data it was trained on, how, and how well it did. Recorded
// in the model file's metadata (as "provenance.*" strings), so that evaluating it on other data
// can be noticed. Every field has an "unknown" default: a model saved without it still loads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace pcnn {

struct Provenance {
  std::string data_folder;              // as given to --data ("" = unknown)
  std::vector<std::string> data_files;  // the IDX files read: train images, labels, test ...
  int64_t train_count = 0, test_count = 0;
  std::string train_labels_crc32, test_labels_crc32;  // 8 hex digits (Dataset::labels_crc32)
  std::string recipe;                   // the training settings, as one line
  int epochs = 0;
  double final_accuracy = -1;           // test accuracy after the last epoch; -1 = unknown
  bool operator==(const Provenance& o) const;
};

// The data fields of a provenance: the folder and files, and the whole sets' counts and label
// checksums, also when train or test is a part (--limit, --val-split: Dataset::origin). One path
// for the pcnn tool and the API (Network::save). test may be null (counts 0: unknown).
Provenance data_provenance(const Dataset& train, const Dataset* test, const std::string& folder);
// data_provenance(data.train, &data.test, data.source).
Provenance data_provenance(const DatasetPair& data);

// The first way two data descriptions differ ("test labels differ (crc32 ...)"), or "" when
// they agree; unknown fields (empty or 0 on either side) are not compared.
std::string data_difference(const Provenance& saved, const Provenance& now);

std::map<std::string, std::string> provenance_metadata(const Provenance& p);
// Throws Error naming the key whose value does not parse.
Provenance provenance_from_metadata(const std::map<std::string, std::string>& meta);

}  // namespace pcnn
