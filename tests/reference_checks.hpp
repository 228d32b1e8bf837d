// The ground truth checking itself: the registry's reference backend (serial), created through the
// registry, and a check whose failure names it. Other backends are only ever compared with this
// one, so a bug in it would be blamed on whichever backend disagrees (tests/test_reference_*.cpp
// compare it with hand-computed and double-precision values instead).
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "tests/compare.hpp"

namespace pcnn::test {

inline const std::string& reference_name() { return reference_backend().name; }
inline std::unique_ptr<Backend> make_reference() { return make_backend(reference_name()); }

// got against want (normalised error <= tol, tests/compare.hpp); a failure names the reference.
inline void check_reference(const std::string& what, const std::vector<float>& got,
                            const std::vector<float>& want, double tol) {
  const Comparison c = compare(got, want, tol);
  CHECK_MESSAGE(c.ok, "backend " << reference_name() << " (the reference), " << what << ": "
                                 << c.detail);
}

}  // namespace pcnn::test
