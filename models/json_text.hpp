// Names and JSON values from untrusted files, as one-line error messages quote them: escaped,
// cut short, and never dumped whole when nested (a 100000-deep array would recurse in dump()).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace pcnn {

// "\"padding\"": JSON-escaped (no raw newline or control character), at most ~60 characters.
std::string quoted(const std::string& s);

// A number, string, boolean or null as written (cut short); an array or object by its size.
std::string brief(const nlohmann::json& v);

}  // namespace pcnn
