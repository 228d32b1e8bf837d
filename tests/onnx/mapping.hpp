// From an ONNX node (operator, attributes, input tensors) to calls of pcnn's backend ops, made
// through the Backend contract only, so the same plan runs on every backend the registry gives.
// Every operator the issue names has a row in mapping.cpp's table; a case the ops cannot express
// gets a skip reason ("attribute strides = 1,2 (...)"), never a silent drop.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "tests/onnx/proto.hpp"

namespace pcnn::test::onnx {

struct Plan {
  std::string skip;           // non-empty: why the case cannot run on pcnn
  std::vector<int64_t> dims;  // the shape of the output pcnn computes (checked against ONNX's)
  std::function<std::vector<float>(Backend&)> run;  // the output, downloaded
};

// Whether op_type has a row in the table (mapped, or listed as not in pcnn yet).
bool is_listed_op(const std::string& op_type);
// The listed operators, in table order (for the summary and the docs).
std::vector<std::string> listed_ops();

// The plan for a single-node model; inputs: the node's inputs in order, nullptr for an optional
// input left out.
Plan plan_case(const Model& m, const std::vector<const Tensor*>& inputs);

}  // namespace pcnn::test::onnx
