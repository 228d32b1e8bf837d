// Every kernel op of the contract on the backend under test against serial: one test case per op
// of core/op_list.hpp, each running all of that op's cases in the op table (tests/op_table.cpp)
// from the same seeded inputs, with the case's tolerance. Plus the memory calls, which are not
// kernel ops.
#include "tests/harness.hpp"
#include "tests/op_table.hpp"

namespace pcnn::test {

namespace {

// The perf cases (the models' layers) at batch 8 here: the perf table's shapes at a cost CI can
// pay; `pcnn_tests --mode test` checks them at the perf batch, 64.
constexpr int kLayerBatch = 8;

const std::vector<OpCase>& table() {
  static const std::vector<OpCase> t = op_table(kLayerBatch);
  return t;
}

void check_op_cases(Op op) {
  for (const OpCase& c : table()) {
    if (c.op != op) continue;
    const Verdict v = compare_outputs(c, run_case(backend(), c), run_case(reference(), c));
    CHECK_MESSAGE(v.ok, "backend " << backend_name() << ", case " << c.label() << ":\n" << v.detail);
  }
}

}  // namespace

TEST_SUITE("backend") {

TEST_CASE("memory: upload, copy, fill, download round trip") {
  Backend& be = backend();
  const auto host = random_vector(1000, 1);
  auto a = to_device(be, host);
  auto b = poisoned(be, 1000);
  be.copy(b.get(), a.get(), 1000 * sizeof(float));
  check_close("copy", b.download(), host, 0.0);
  auto c = poisoned(be, 300);
  be.fill(c.get(), 0.25f, 300);
  check_close("fill", c.download(), std::vector<float>(300, 0.25f), 0.0);
}

#define PCNN_OP_TEST(op) \
  TEST_CASE("op " #op ": every case of the op table against serial") { check_op_cases(Op::op); }
PCNN_ALL_OPS(PCNN_OP_TEST)
#undef PCNN_OP_TEST

}  // TEST_SUITE

}  // namespace pcnn::test
