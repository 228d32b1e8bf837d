// Quoting for error messages; see json_text.hpp for why nested values are not dumped.
#include "models/json_text.hpp"

#include <nlohmann/json.hpp>

namespace pcnn {

namespace {
std::string cut(const std::string& s) { return s.size() <= 60 ? s : s.substr(0, 56) + "...\""; }
}  // namespace

std::string quoted(const std::string& s) {
  return cut(nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string brief(const nlohmann::json& v) {
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " values";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " keys";
  if (v.is_string()) return quoted(v.get_ref<const std::string&>());
  return cut(v.dump());
}

}  // namespace pcnn
