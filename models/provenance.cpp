// Provenance <-> metadata strings (numbers through metadata_number / metadata_value), and the
// comparison of the data a model was trained on with the data it is given.
#include "models/provenance.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "models/tensor_file.hpp"

namespace pcnn {

namespace {
const std::string kPrefix = "provenance.";

std::string text(const std::map<std::string, std::string>& meta, const std::string& key) {
  const auto it = meta.find(kPrefix + key);
  return it == meta.end() ? std::string() : it->second;
}
}  // namespace

bool Provenance::operator==(const Provenance& o) const {
  return data_folder == o.data_folder && data_files == o.data_files &&
         train_count == o.train_count && test_count == o.test_count &&
         train_labels_crc32 == o.train_labels_crc32 && test_labels_crc32 == o.test_labels_crc32 &&
         recipe == o.recipe && epochs == o.epochs && final_accuracy == o.final_accuracy;
}

Provenance data_provenance(const Dataset& train, const Dataset* test, const std::string& folder) {
  Provenance p;
  p.data_folder = folder;
  const DatasetOrigin whole = train.origin();
  p.train_count = whole.count;
  p.train_labels_crc32 = crc32_text(whole.labels_crc32);
  p.data_files = {train.images_file, train.labels_file};
  if (test) {
    const DatasetOrigin whole_test = test->origin();
    p.test_count = whole_test.count;
    p.test_labels_crc32 = crc32_text(whole_test.labels_crc32);
    p.data_files.push_back(test->images_file);
    p.data_files.push_back(test->labels_file);
  }
  return p;
}

Provenance data_provenance(const DatasetPair& data) {
  return data_provenance(data.train, &data.test, data.source);
}

std::string data_difference(const Provenance& saved, const Provenance& now) {
  const auto differ = [](const std::string& a, const std::string& b) {
    return !a.empty() && !b.empty() && a != b;
  };
  const auto count_differs = [](int64_t a, int64_t b) { return a && b && a != b; };
  if (count_differs(saved.train_count, now.train_count) || count_differs(saved.test_count, now.test_count))
    return "trained on " + std::to_string(saved.train_count) + " / " + std::to_string(saved.test_count) +
           " images, given " + std::to_string(now.train_count) + " / " + std::to_string(now.test_count);
  if (differ(saved.test_labels_crc32, now.test_labels_crc32))
    return "the test labels differ (crc32 " + saved.test_labels_crc32 + " when saved, " +
           now.test_labels_crc32 + " now)";
  if (differ(saved.train_labels_crc32, now.train_labels_crc32))
    return "the training labels differ (crc32 " + saved.train_labels_crc32 + " when saved, " +
           now.train_labels_crc32 + " now)";
  return "";
}

std::map<std::string, std::string> provenance_metadata(const Provenance& p) {
  return {{kPrefix + "data_folder", p.data_folder},
          {kPrefix + "data_files", nlohmann::json(p.data_files).dump()},
          {kPrefix + "train_count", metadata_number(p.train_count)},
          {kPrefix + "test_count", metadata_number(p.test_count)},
          {kPrefix + "train_labels_crc32", p.train_labels_crc32},
          {kPrefix + "test_labels_crc32", p.test_labels_crc32},
          {kPrefix + "recipe", p.recipe},
          {kPrefix + "epochs", metadata_number(int64_t(p.epochs))},
          {kPrefix + "final_accuracy", metadata_number(p.final_accuracy)}};
}

Provenance provenance_from_metadata(const std::map<std::string, std::string>& meta) {
  Provenance p;
  p.data_folder = text(meta, "data_folder");
  const std::string files = text(meta, "data_files");
  if (!files.empty()) {
    const auto j = nlohmann::json::parse(files, nullptr, false);
    PCNN_CHECK(j.is_array() && std::all_of(j.begin(), j.end(), [](const auto& f) { return f.is_string(); }),
               "metadata '" << kPrefix << "data_files' is not a list of names");
    p.data_files = j.get<std::vector<std::string>>();
  }
  p.train_count = metadata_value<int64_t>(meta, kPrefix + "train_count", 0);
  p.test_count = metadata_value<int64_t>(meta, kPrefix + "test_count", 0);
  p.train_labels_crc32 = text(meta, "train_labels_crc32");
  p.test_labels_crc32 = text(meta, "test_labels_crc32");
  p.recipe = text(meta, "recipe");
  p.epochs = metadata_value<int>(meta, kPrefix + "epochs", 0);
  p.final_accuracy = metadata_value<double>(meta, kPrefix + "final_accuracy", -1.0);
  return p;
}

}  // namespace pcnn
