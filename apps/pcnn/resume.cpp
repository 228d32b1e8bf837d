// Values are compared exactly: an option parsed from the same text as the original one gives the
// same float, and the checkpoint stores every number so that it reads back exactly.
#include "apps/pcnn/resume.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/pcnn/common.hpp"
#include "core/check.hpp"
#include "models/model_spec.hpp"
#include "models/provenance.hpp"

namespace pcnn::cli {

namespace {
template <class T>
std::string text(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

void ResumeCheck::refuse_if(bool differs, const std::string& option, const std::string& given,
                            const std::string& saved) const {
  if (!differs || train_.count(option) == 0) return;
  throw CLI::ValidationError(option, given + " contradicts the checkpoint '" + path_ +
                             "', whose run has " + saved + " (leave " + option +
                             " out to resume, or start a new run without --resume)");
}

void ResumeCheck::same(const std::string& option, int given, int saved) const {
  refuse_if(given != saved, option, text(given), text(saved));
}
void ResumeCheck::same(const std::string& option, uint32_t given, uint32_t saved) const {
  refuse_if(given != saved, option, text(given), text(saved));
}
void ResumeCheck::same(const std::string& option, float given, float saved) const {
  refuse_if(given != saved, option, text(given), text(saved));
}
void ResumeCheck::same(const std::string& option, const std::string& given,
                       const std::string& saved) const {
  refuse_if(given != saved, option, given, saved);
}

void ResumeCheck::same_model(const std::string& given, const ModelSpec& saved) const {
  if (train_.count("--model") == 0) return;
  const ModelSpec spec = load_spec(given);
  refuse_if(to_json(spec) != to_json(saved), "--model", "'" + given + "' (" + spec.name + ")",
            "model '" + saved.name + "'");
}

void check_same_data(const Checkpoint& c, const Provenance& source, const std::string& folder,
                     const std::string& path) {
  const std::string diff = data_difference(c.data, source);
  PCNN_CHECK(diff.empty(), "--resume: the data in '" << folder << "' are not those the "
                           << "checkpoint '" << path << "' was trained on: " << diff);
}

}  // namespace pcnn::cli
