// The ONNX node conformance cases Debian's libonnx-testdata installs: one folder per case
// (test_<name>/model.onnx, test_data_set_0/input_<k>.pb and output_<k>.pb). Which of them concern
// pcnn: a single-node graph of an operator mapping.cpp lists, and the "_expanded" twin of such a
// case (the same test written as a graph of primitive ops), which is listed and skipped.
#pragma once

#include <string>
#include <vector>

#include "tests/onnx/proto.hpp"

namespace pcnn::test::onnx {

// The folder of the cases: $PCNN_ONNX_NODE_DIR, else the path CMake was given
// (PCNN_ONNX_NODE_DIR, default /usr/share/libonnx-testdata/data/node).
std::string cases_folder();

struct Case {
  std::string name;  // the folder's name, "test_conv_with_strides_padding"
  std::string dir;
  Model model;
  std::string expands;  // an "_expanded" case: the name of the single-node case it spells out
};

// The cases of `folder` that concern pcnn, in name order. Throws pcnn::Error when the folder is
// missing (the message says to run scripts/setup.sh) or a model cannot be read.
std::vector<Case> find_cases(const std::string& folder);

// The node's inputs, read from test_data_set_0 (the graph's k-th input is input_<k>.pb); an
// optional input the node leaves out stays absent (present[k] false).
struct CaseData {
  std::vector<Tensor> inputs;  // one per node input ("" inputs hold an empty Tensor)
  std::vector<bool> present;
  std::vector<Tensor> outputs;  // output_<k>.pb, one per graph output
};
CaseData load_case_data(const Case& c);

}  // namespace pcnn::test::onnx
