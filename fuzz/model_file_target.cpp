// Fuzz target: the model-file decoder. Checksums are not verified in the fuzzing build
// (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION), so mutations reach the header and tensor checks.
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "fuzz/targets.hpp"
#include "models/serialize.hpp"

namespace pcnn::fuzz {

void model_file_target(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  SavedModel m;
  try {
    m = decode_model(bytes, "fuzz input");
  } catch (const Error&) {
    return;
  }
  // What loaded must save, load again unchanged, and save to the same bytes.
  std::string again;
  SavedModel back;
  try {
    again = encode_model(m);
    back = decode_model(again, "re-encoded model");
  } catch (const Error& e) {
    throw FuzzFailure(std::string("a model that loaded does not save and load again: ") + e.what());
  }
  require(back.params == m.params && back.mean == m.mean && back.inv_std == m.inv_std &&
              to_json(back.spec) == to_json(m.spec) && back.provenance == m.provenance,
          "a model changed through save and load");
  require(encode_model(back) == again, "saving the same model twice gave different bytes");
}

}  // namespace pcnn::fuzz
