// Every small convolution and pooling geometry, valid or not, through the spec checks and, where
// accepted, through every usable backend (fuzz::model_spec_check: finite, equal to serial). The
// fuzzers sample this space at random; this sweep covers its edges every run, so a check that
// goes missing (a window or stride of 0 let through) fails here, not in a user's training run.
#include <nlohmann/json.hpp>

#include "fuzz/targets.hpp"
#include "models/model_spec.hpp"
#include "tests/hostile_files.hpp"

namespace pcnn::test {

namespace {
// The specs of the sweep: a conv with an optional fused pool, then a stand-alone pool.
std::vector<std::string> sweep_specs() {
  std::vector<std::string> specs;
  // Each list holds the edges of the valid range and the invalid values next to them.
  for (int kernel : {0, 1, 2, 3, 5})
    for (int stride : {0, 1, 2, 3})
      for (int pad : {-1, 0, 1, 2, 4})
        for (const char* pool : {"none", "maxpool", "avgpool"})
          for (int window : {0, 1, 2, 3})
            for (int pool_stride : {0, 1, 2}) {
              const bool fused = std::string(pool) != "none";
              if (!fused && (window != 1 || pool_stride != 1)) continue;
              nlohmann::json conv = {{"type", "conv"}, {"units", 2}, {"kernel", kernel},
                                     {"stride", stride}, {"pad", pad}, {"act", "relu"}};
              if (fused) conv.update({{"pool", pool}, {"pool_window", window}, {"pool_stride", pool_stride}});
              const nlohmann::json standalone = {{"type", "avgpool"}, {"kernel", 1 + window % 2},
                                                 {"stride", pool_stride}};
              const nlohmann::json layers = {conv, standalone, {{"type", "flatten"}},
                                             {{"type", "dense"}, {"units", 3}}};
              specs.push_back(nlohmann::json{{"input", {2, 7, 6}}, {"classes", 3}, {"layers", layers}}.dump());
            }
  return specs;
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("every small conv and pool geometry is refused cleanly or runs right on every backend") {
  const auto specs = sweep_specs();
  size_t accepted = 0;
  for (const std::string& s : specs)
    accepted += refusal([&] { model_spec_from_json(nlohmann::json::parse(s)); }).empty();
  MESSAGE(accepted << " of " << specs.size() << " geometries are valid");
  CHECK(accepted > 200);
  CHECK(accepted < specs.size());
  for (const auto& be : usable_backends()) {
    for (const std::string& s : specs) {
      INFO(be->name() << ": " << s);
      CHECK_NOTHROW(fuzz::model_spec_check(*be, reinterpret_cast<const uint8_t*>(s.data()), s.size()));
    }
  }
}

}  // TEST_SUITE

}  // namespace pcnn::test
