// docs/model-format.md against the code it documents, so the page cannot drift: every layer
// type, activation and pooling name of core/vocabulary.hpp has its heading or row, each layer
// type's key table lists exactly the keys the reader takes, the top-level table likewise, and
// the complete example parses.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "core/vocabulary.hpp"
#include "models/model_spec.hpp"

using namespace pcnn;

namespace {
std::string read_doc() {
  const std::string path = std::string(PCNN_SOURCE_DIR) + "/docs/model-format.md";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot open " << path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text from `heading` (a whole line) up to the next heading of its level or above.
std::string section(const std::string& doc, const std::string& heading) {
  const size_t at = doc.find("\n" + heading + "\n");
  REQUIRE_MESSAGE(at != std::string::npos, "no heading '" << heading << "'");
  const size_t level = heading.find(' ');
  size_t end = at + heading.size() + 2;
  for (;;) {
    end = doc.find("\n#", end);
    if (end == std::string::npos) break;
    const size_t hashes = doc.find_first_not_of('#', end + 1) - (end + 1);
    if (hashes <= level) break;
    ++end;
  }
  return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The first cell of each table row that is a `quoted` word: "| `units` | ..." -> units.
std::set<std::string> table_words(const std::string& text) {
  std::set<std::string> words;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| `", 0) == 0) {
      const size_t end = line.find('`', 3);
      if (end != std::string::npos) words.insert(line.substr(3, end - 3));
    }
  return words;
}

// Sorted and joined, so a failed comparison prints both lists.
std::string listed(const std::set<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}
std::string listed(const std::vector<std::string>& words) {
  return listed(std::set<std::string>(words.begin(), words.end()));
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("docs/model-format.md: every layer type has a heading, its keys a table of exactly them") {
  const std::string doc = read_doc();
  const std::string activations = section(doc, "### `relu`, `tanh`, `sigmoid`, `elu`");
  for (const LayerType& t : all_layer_types()) {
    const std::string name = layer_type_name(t);
    INFO("layer type " << name);
    if (t.kind == LayerKind::Act) {
      // Activation layers share one heading that names each of them.
      CHECK(activations.find("`" + name + "`") != std::string::npos);
      CHECK(layer_keys(t.kind).empty());
      continue;
    }
    const std::string text = section(doc, "### `" + name + "`");
    CHECK(listed(table_words(text)) == listed(layer_keys(t.kind)));
  }
  // And no heading for a type the reader does not know.
  std::istringstream lines(section(doc, "## Layers"));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("### `", 0) == 0 && line.find(',') == std::string::npos) {
      INFO(line);
      CHECK(find_layer_type(line.substr(5, line.find('`', 5) - 5)));
    }
}

TEST_CASE("docs/model-format.md: the top-level keys, activations and pooling kinds, all and only") {
  const std::string doc = read_doc();
  CHECK(listed(table_words(section(doc, "## The top level"))) == listed(spec_keys()));
  std::set<std::string> activations, pools;
  for (Activation a : all_activations()) activations.insert(activation_name(a));
  for (PoolKind p : all_pool_kinds()) pools.insert(pool_name(p));
  CHECK(listed(table_words(section(doc, "## Activations"))) == listed(activations));
  CHECK(listed(table_words(section(doc, "## Pooling kinds"))) == listed(pools));
  // Each activation's row states the initialisation the code picks for it.
  std::istringstream lines(section(doc, "## Activations"));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| `", 0) == 0) {
      const Activation a = parse_activation(line.substr(3, line.find('`', 3) - 3));
      INFO(line);
      CHECK(line.find(preferred_init(a) == InitKind::Kaiming ? "| Kaiming |" : "| Xavier |") !=
            std::string::npos);
    }
}

TEST_CASE("docs/model-format.md: the complete example is a valid spec") {
  const std::string text = section(read_doc(), "## A complete example");
  const size_t begin = text.find("```json\n");
  REQUIRE(begin != std::string::npos);
  const size_t end = text.find("```", begin + 8);
  REQUIRE(end != std::string::npos);
  const ModelSpec spec = model_spec_from_json(nlohmann::json::parse(text.substr(begin + 8, end - begin - 8)));
  CHECK(spec.name == "lenet5-avg");
  CHECK(spec.layers.size() == 9);
}

}  // TEST_SUITE
