// Finding the conformance cases and reading their tensors (see cases.hpp).
#include "tests/onnx/cases.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/check.hpp"
#include "tests/onnx/mapping.hpp"

#ifndef PCNN_ONNX_NODE_DIR
#define PCNN_ONNX_NODE_DIR "/usr/share/libonnx-testdata/data/node"
#endif

namespace pcnn::test::onnx {

namespace fs = std::filesystem;

namespace {

const std::string kExpanded = "_expanded";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

Tensor read_tensor_file(const std::string& path) { return parse_tensor(read_bytes(path), path); }

}  // namespace

std::string cases_folder() {
  const char* env = std::getenv("PCNN_ONNX_NODE_DIR");
  return env && *env ? env : PCNN_ONNX_NODE_DIR;
}

std::vector<Case> find_cases(const std::string& folder) {
  PCNN_CHECK(fs::is_directory(folder),
             "the ONNX conformance cases are not at "
                 << folder
                 << ": install Debian's libonnx-testdata (scripts/setup.sh does) or point "
                    "PCNN_ONNX_NODE_DIR at its data/node folder");
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(folder))
    if (e.is_directory() && e.path().filename().string().rfind("test_", 0) == 0)
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());

  // Every model is read, so the reader meets all of ONNX's node tests, not only pcnn's.
  std::map<std::string, Case> all;
  for (const std::string& name : names) {
    Case c;
    c.name = name;
    c.dir = folder + "/" + name;
    const std::string model = c.dir + "/model.onnx";
    c.model = parse_model(read_bytes(model), model);
    all.emplace(name, std::move(c));
  }
  auto single_listed = [](const Case& c) {
    return c.model.nodes.size() == 1 && is_listed_op(c.model.nodes[0].op_type);
  };
  std::vector<Case> cases;
  for (auto& [name, c] : all) {
    if (single_listed(c)) {
      cases.push_back(c);
    } else if (ends_with(name, kExpanded)) {
      const auto base = all.find(name.substr(0, name.size() - kExpanded.size()));
      if (base != all.end() && single_listed(base->second)) {
        c.expands = base->first;
        cases.push_back(c);
      }
    }
  }
  PCNN_CHECK(!cases.empty(), folder << " holds no case of " << listed_ops().front()
                                    << " and the other "
                                       "operators pcnn maps: is it ONNX's data/node folder?");
  return cases;
}

CaseData load_case_data(const Case& c) {
  const Model& m = c.model;
  const std::string data = c.dir + "/test_data_set_0/";
  CaseData d;
  for (const std::string& in : m.nodes.at(0).inputs) {
    if (in.empty()) {
      d.inputs.emplace_back();
      d.present.push_back(false);
      continue;
    }
    const auto it = std::find(m.inputs.begin(), m.inputs.end(), in);
    PCNN_CHECK(it != m.inputs.end(), c.name << ": node input " << in << " is not a graph input");
    const size_t k = size_t(it - m.inputs.begin());
    d.inputs.push_back(read_tensor_file(data + "input_" + std::to_string(k) + ".pb"));
    d.present.push_back(true);
  }
  for (size_t k = 0; k < m.outputs.size(); ++k)
    d.outputs.push_back(read_tensor_file(data + "output_" + std::to_string(k) + ".pb"));
  return d;
}

}  // namespace pcnn::test::onnx
