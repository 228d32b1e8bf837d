// Finite differences on the backend under test: every case of the op table that carries a
// gradient check (tests/op_table.cpp: the conv, pool, bias, activation, loss and fused ops, every
// activation and pooling kind) compares its backward ops with central differences of its forward.
#include "tests/harness.hpp"
#include "tests/op_table.hpp"

namespace pcnn::test {

TEST_SUITE("backend") {

TEST_CASE("finite differences: every gradient case of the op table") {
  for (const OpCase& c : op_table()) {
    if (!c.grad) continue;
    const Verdict v = check_gradient(backend(), c);
    CHECK_MESSAGE(v.ok, "backend " << backend_name() << ", case " << c.label() << ":\n" << v.detail);
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
