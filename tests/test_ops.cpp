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

// A backend's own 16-bit forms (cuda's convolutions) widen as they load and round as they store
// around the fp32 sums, so they must give the bits of the composed default exactly: any
// difference is a load, a store or a plan that differs from the fp32 op's. A form that rounds
// its fp32 operands for tensor cores (Backend::rounds_16bit_products: cuda's dense layers) is held
// to the op table's 16-bit tolerance instead. On a backend without its own forms (one that
// stages for the op) both runs take the default: the check is then that it repeats, within the
// 16-bit tolerance, since its fp32 kernels need not repeat their bits (cudnn takes a
// nondeterministic algorithm when no deterministic one is within 10 % of it, and a one-ulp fp32
// difference at a rounding boundary moves the stored 16-bit value a whole step: seen on the H100,
// fp16 conv dx, one element in 25,088).
TEST_CASE("16-bit fused ops: the backend's own form gives the composed default's bits") {
  for (const OpCase& c : table()) {
    if (!is_fused_16(c.op)) continue;
    OpCase composed = composed_16(c);
    const bool own_form = !stages_for(backend().stages_16bit(), c.op);
    if (own_form && !backend().rounds_16bit_products(c.op)) composed.tol = kExact;
    const Verdict v =
        compare_outputs(composed, run_case(backend(), c), run_case(backend(), composed));
    CHECK_MESSAGE(v.ok, "backend " << backend_name() << ", case " << c.label()
                                   << " against the composed default:\n" << v.detail);
    // A backend that wants no staging for this op must run it the same without.
    if (stages_for(backend().stages_16bit(), c.op)) continue;
    OpCase unstaged = unstaged_16(c);
    unstaged.tol = kExact;
    const Verdict u =
        compare_outputs(unstaged, run_case(backend(), unstaged), run_case(backend(), c));
    CHECK_MESSAGE(u.ok, "backend " << backend_name() << ", case " << c.label()
                                   << " without staging floats:\n" << u.detail);
  }
}

#define PCNN_OP_TEST(op) \
  TEST_CASE("op " #op ": every case of the op table against serial") { check_op_cases(Op::op); }
PCNN_ALL_OPS(PCNN_OP_TEST)
#undef PCNN_OP_TEST

}  // TEST_SUITE

}  // namespace pcnn::test
