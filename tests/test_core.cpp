// Backend-independent parts: the serial reference against direct loops, the op table itself (every
// op of core/op_list.hpp has cases, every gradient a grad case, every activation and pooling kind
// is covered; the harness catches what it should), the IDX reader on good and bad files, saved
// models, model specs, the shuffle, and the registry's error messages.
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/registry.hpp"
#include "core/activation_math.hpp"
#include "core/check.hpp"
#include "core/shuffle.hpp"
#include "data/dataset.hpp"
#include "data/idx.hpp"
#include "models/model.hpp"
#include "models/serialize.hpp"
#include "tests/harness.hpp"
#include "tests/naive.hpp"
#include "tests/op_table.hpp"

namespace pcnn::test {

namespace {
std::string temp_path(const std::string& name) { return "/tmp/pcnn_test_" + name; }

std::vector<uint8_t> idx_bytes(uint8_t rank, const std::vector<uint32_t>& dims, size_t payload) {
  std::vector<uint8_t> b = {0, 0, 0x08, rank};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(d >> s));
  for (size_t i = 0; i < payload; ++i) b.push_back(uint8_t(i * 7));
  return b;
}
void write_file(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
}
void write_gz(const std::string& path, const std::vector<uint8_t>& b) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  gzwrite(f, b.data(), unsigned(b.size()));
  gzclose(f);
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("serial convolution and gemm match direct double-precision loops") {
  auto be = make_backend("serial");
  for (const OpCase& c : op_table()) {
    if ((c.op != Op::conv2d_forward && c.op != Op::gemm) || c.perf) continue;
    const std::vector<TensorSpec> in = case_tensors(c);
    auto values = [&](const std::string& name) {
      for (const auto& t : in)
        if (t.name == name) return t.init;
      return std::vector<float>{};  // an output, or no bias
    };
    const GemmArgs& g = c.p.gemm;
    const std::vector<float> want =
        c.op == Op::conv2d_forward
            ? naive_conv2d(c.p.conv, values("x"), values("w"), values("b"))
            : naive_gemm(g.trans_a, g.trans_b, g.M, g.N, g.K, g.alpha, values("A"), values("B"),
                         g.beta, values("C"));
    const RunResult got = run_case(*be, c);
    CHECK_MESSAGE(got.problems.empty(), c.label() << ": " << got.problems);
    REQUIRE(got.outputs.size() == 1);
    check_close("serial " + c.label(), got.outputs[0].values, want, 1e-6);
  }
}

TEST_CASE("op harness: guard bytes, a changed input and an unwritten output are caught") {
  auto be = make_backend("serial");
  DeviceTensors t(*be, {in("x", {1.f, 2.f, 3.f}), misaligned(out("y", 4)), out("z", 2)});
  be->fill(t.f("y"), 1.f, 5);      // one past the end
  be->fill(t.f("z") - 1, 1.f, 1);  // one before the start
  be->fill(t.f("x"), 7.f, 1);      // an input is const
  std::string problems;
  const std::vector<Output> outs = t.outputs(&problems);
  CHECK(problems.find("after y") != std::string::npos);
  CHECK(problems.find("before z") != std::string::npos);
  CHECK(problems.find("changed its input x") != std::string::npos);
  REQUIRE(outs.size() == 2);
  const Comparison c = compare(outs[1].values, {1.f, 1.f}, 0.0);  // z was never written
  CHECK(!c.ok);
  CHECK(c.detail.find("non-finite") != std::string::npos);
  CHECK(compare(outs[0].values, {1.f, 1.f, 1.f, 1.f}, 0.0).ok);
}

TEST_CASE("op table: every op of core/op_list.hpp has cases, every gradient a grad case") {
  const std::vector<OpCase> table = op_table();
  for (int i = 0; i < kOpCount; ++i) {
    const Op op = Op(i);
    int cases = 0, perf = 0, grads = 0;
    for (const OpCase& c : table) {
      cases += c.op == op;
      perf += c.op == op && c.perf;
      if (c.grad)
        for (Op checked : c.grad->checks) grads += checked == op;
    }
    CHECK_MESSAGE(cases > 0, "op " << op_name(op) << " has no case in tests/op_table.cpp");
    CHECK_MESSAGE(perf > 0, "op " << op_name(op) << " has no perf case in tests/op_table.cpp");
    if (has_gradient(op))
      CHECK_MESSAGE(grads > 0, "op " << op_name(op) << " computes a gradient but no grad case "
                                        "in tests/op_table.cpp checks it");
  }
  std::set<std::string> labels;
  for (const OpCase& c : table) {
    CHECK_MESSAGE(labels.insert(c.label()).second, "two cases are called " << c.label());
    CHECK_MESSAGE(std::strlen(c.tol.why) > 0, c.label() << ": tolerance without a reason");
    if (c.grad) CHECK_MESSAGE(std::strlen(c.grad->why) > 0, c.label() << ": grad tolerance without a reason");
  }
}

TEST_CASE("op table: every activation and pooling kind of the vocabulary, forward and gradient") {
  const std::vector<OpCase> table = op_table();
  auto count = [&](Op op, bool grad, const std::function<bool(const OpParams&)>& match) {
    int n = 0;
    for (const OpCase& c : table) n += c.op == op && (!grad || c.grad) && match(c.p);
    return n;
  };
  for (Activation a : all_activations()) {
    auto act = [a](const OpParams& p) { return p.act == a; };
    INFO("activation " << activation_name(a));
    CHECK(count(Op::activation_forward, true, act) > 0);
    CHECK(count(Op::activation_backward, false, act) > 0);
    CHECK(count(Op::linear_forward, true, act) > 0);
    CHECK(count(Op::linear_backward, false, act) > 0);
    CHECK(count(Op::max_pool_backward_argmax, false, act) > 0);
    for (PoolKind k : all_pool_kinds()) {
      INFO("pooling " << pool_name(k));
      auto epi = [a, k](const OpParams& p) { return p.epi.act == a && p.epi.pool == k; };
      CHECK(count(Op::conv2d_fused_forward, true, epi) > 0);
      CHECK(count(Op::conv2d_fused_backward, false, epi) > 0);
    }
  }
  for (PoolKind k : all_pool_kinds()) {
    if (k == PoolKind::None) continue;
    auto kind = [k](const OpParams& p) { return p.pool_kind == k; };
    INFO("pooling " << pool_name(k));
    CHECK(count(Op::pool2d_forward, true, kind) > 0);
    CHECK(count(Op::pool2d_backward, false, kind) > 0);
  }
}

TEST_CASE("op table: max pooling's argmax is compared, on every fused max-pooled shape too") {
  auto compares_argmax = [](const OpCase& c) {
    for (const TensorSpec& t : case_tensors(c))
      if (t.name == "argmax") return t.role == Role::Out && t.type == DType::U8;
    return false;
  };
  std::set<std::string> fused, compared;  // fused max-pooled cases, by shape and epilogue
  for (const OpCase& c : op_table(8)) {
    if (c.op == Op::pool2d_forward && c.p.pool_kind == PoolKind::Max && c.p.with_argmax)
      CHECK_MESSAGE(compares_argmax(c), c.label() << " does not compare its argmax");
    if (c.op != Op::conv2d_fused_forward || c.p.epi.pool != PoolKind::Max) continue;
    const std::string shape = c.name.substr(0, c.name.find(" (grid inputs)"));
    fused.insert(shape);
    if (compares_argmax(c)) compared.insert(shape);
  }
  CHECK(!fused.empty());
  for (const std::string& shape : fused)
    CHECK_MESSAGE(compared.count(shape), "no case compares the argmax of " << shape);
}

// A fused max pool keeps only its maximum's place and takes act' from the pooled output: that is
// right only if pooling act(z) picks act(max z), i.e. every activation is non-decreasing.
TEST_CASE("every activation is non-decreasing (the fused max pool's backward relies on it)") {
  for (Activation a : all_activations()) {
    INFO(activation_name(a));
    float previous = activate(a, -20.f);
    for (float x = -20.f + 1.f / 64; x <= 20.f; x += 1.f / 64) {
      const float y = activate(a, x);
      REQUIRE(y >= previous);
      previous = y;
    }
  }
}

TEST_CASE("op table: inputs are seeded, never all zeros (accumulators may be), the right size") {
  for (const OpCase& c : op_table()) {
    if (c.perf) continue;  // the same generators at batch 64: time better spent elsewhere
    const std::vector<TensorSpec> a = case_tensors(c), b = case_tensors(c);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      INFO(c.label() << ", tensor " << a[i].name);
      // the same seed, the same values (bit for bit: check_step's gradients hold NaN)
      CHECK(a[i].init.size() == b[i].init.size());
      // (an empty vector's data() may be null, which memcmp must not be given)
      CHECK((a[i].init.empty() || std::memcmp(a[i].init.data(), b[i].init.data(),
                                              a[i].init.size() * sizeof(float)) == 0));
      const bool has_values = a[i].role == Role::In || a[i].role == Role::InOut;
      CHECK(a[i].init.size() == (has_values ? a[i].size : 0));
      if (a[i].role == Role::In && a[i].type == DType::F32 && a[i].size > 1)
        CHECK(std::any_of(a[i].init.begin(), a[i].init.end(), [](float v) { return v != 0.f; }));
    }
  }
}

TEST_CASE("IDX: raw and gzipped files read back exactly") {
  const auto bytes = idx_bytes(3, {4, 3, 2}, 24);
  write_file(temp_path("ok.idx"), bytes);
  write_gz(temp_path("ok.idx.gz"), bytes);
  for (const std::string& p : {temp_path("ok.idx"), temp_path("ok.idx.gz")}) {
    const IdxArray a = read_idx(p);
    CHECK(a.dims == std::vector<int>{4, 3, 2});
    REQUIRE(a.data.size() == 24);
    CHECK(a.data[5] == uint8_t(35));
  }
}

TEST_CASE("IDX: truncated, oversized, foreign and corrupt files are rejected clearly") {
  auto bytes = idx_bytes(3, {4, 3, 2}, 23);  // one byte short
  write_file(temp_path("short.idx"), bytes);
  CHECK(error_of([] { read_idx(temp_path("short.idx")); }).find("truncated") != std::string::npos);
  bytes = idx_bytes(3, {4, 3, 2}, 25);
  write_file(temp_path("long.idx"), bytes);
  CHECK(error_of([] { read_idx(temp_path("long.idx")); }).find("header says") != std::string::npos);
  bytes = idx_bytes(3, {4, 3, 2}, 24);
  bytes[0] = 'P';
  write_file(temp_path("magic.idx"), bytes);
  CHECK(error_of([] { read_idx(temp_path("magic.idx")); }).find("magic") != std::string::npos);
  bytes = idx_bytes(3, {4, 3, 2}, 24);
  bytes[2] = 0x0D;  // float IDX
  write_file(temp_path("float.idx"), bytes);
  CHECK(error_of([] { read_idx(temp_path("float.idx")); }).find("type") != std::string::npos);
  write_file(temp_path("tiny.idx"), {0, 0});
  CHECK(!error_of([] { read_idx(temp_path("tiny.idx")); }).empty());
  // A gzip stream cut in half.
  write_gz(temp_path("cut.gz"), idx_bytes(3, {40, 30, 20}, 24000));
  std::ifstream in(temp_path("cut.gz"), std::ios::binary);
  std::vector<uint8_t> gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  gz.resize(gz.size() / 2);
  write_file(temp_path("cut.gz"), gz);
  CHECK(error_of([] { read_idx(temp_path("cut.gz")); }).find("gzip") != std::string::npos);
  CHECK(error_of([] { read_idx(temp_path("does-not-exist")); }).find("cannot open") !=
        std::string::npos);
}

TEST_CASE("MNIST folders: mismatched counts, bad labels and missing files are rejected") {
  write_file(temp_path("im.idx"), idx_bytes(3, {5, 2, 2}, 20));
  write_file(temp_path("lb.idx"), idx_bytes(1, {4}, 4));
  CHECK(error_of([] { load_idx_pair(temp_path("im.idx"), temp_path("lb.idx")); })
            .find("labels") != std::string::npos);
  auto labels = idx_bytes(1, {5}, 0);
  for (uint8_t v : {1, 2, 3, 4, 12}) labels.push_back(v);
  write_file(temp_path("lb.idx"), labels);
  CHECK(error_of([] { load_idx_pair(temp_path("im.idx"), temp_path("lb.idx")); })
            .find("label 12") != std::string::npos);
  CHECK(error_of([] { load_mnist_folder("/nonexistent-pcnn-dir"); }).find("has no") !=
        std::string::npos);
}

TEST_CASE("saved models round-trip and corrupt files are rejected") {
  SavedModel m;
  m.spec = builtin_model("lenet5");
  m.mean = 0.25f;
  m.inv_std = 3.f;
  m.params = initial_params(m.spec, 5);
  save_model(temp_path("m.pcnn"), m);
  const SavedModel back = load_model(temp_path("m.pcnn"));
  CHECK(back.params == m.params);
  CHECK(back.mean == m.mean);
  CHECK(to_json(back.spec) == to_json(m.spec));
  CHECK_FALSE(std::ifstream(temp_path("m.pcnn.tmp")).good());  // no temporary left behind
  // Truncate it.
  std::ifstream in(temp_path("m.pcnn"), std::ios::binary);
  std::vector<uint8_t> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  all.resize(all.size() - 10);
  write_file(temp_path("m_cut.pcnn"), all);
  CHECK(error_of([] { load_model(temp_path("m_cut.pcnn")); }).find("truncated") != std::string::npos);
  write_file(temp_path("m_bad.pcnn"), {'h', 'e', 'l', 'l', 'o'});
  CHECK(error_of([] { load_model(temp_path("m_bad.pcnn")); }).find("not a ParallelCNN") !=
        std::string::npos);
}

TEST_CASE("model specs: built-ins, fusion, JSON round trip, bad specs") {
  for (const auto& name : builtin_model_names()) {
    const ModelSpec s = builtin_model(name);
    CHECK(to_json(model_spec_from_json(to_json(s))) == to_json(s));
    CHECK(fuse(s).layers.size() < s.layers.size());
  }
  const ModelSpec lenet = fuse(builtin_model("lenet5"));
  REQUIRE(lenet.layers.size() == 6);  // conv, conv, flatten, dense x3
  CHECK(lenet.layers[0].act == "relu");
  CHECK(lenet.layers[0].pool == "maxpool");
  CHECK(error_of([] { builtin_model("resnet"); }).find("unknown model") != std::string::npos);
  auto bad = nlohmann::json::parse(R"({"input":[1,28,28],"layers":[{"type":"dense","units":7}]})");
  auto serial = make_backend("serial");
  CHECK(error_of([&] { Model m(*serial, model_spec_from_json(bad), 4, 1); }).find("logits") !=
        std::string::npos);
  bad = nlohmann::json::parse(R"({"input":[1,28,28],"layers":[{"type":"warp"}]})");
  CHECK(error_of([&] { Model m(*serial, model_spec_from_json(bad), 4, 1); }).find("warp") !=
        std::string::npos);
  bad = nlohmann::json::parse(R"({"input":[1,4,4],"layers":[{"type":"conv","units":2,"kernel":5}]})");
  CHECK(error_of([&] { Model m(*serial, model_spec_from_json(bad), 4, 1); }).find("does not fit") !=
        std::string::npos);
}

TEST_CASE("shuffle: a bijection for every size, identity without a key, differs by epoch") {
  for (uint32_t n : {1u, 2u, 3u, 17u, 64u, 1000u, 60000u}) {
    std::set<uint32_t> seen;
    for (uint32_t i = 0; i < n; ++i) seen.insert(shuffle_index(i, n, epoch_seed(1, 0)));
    CHECK(seen.size() == n);
    CHECK(*seen.rbegin() == n - 1);
    CHECK(shuffle_index(n / 2, n, 0) == n / 2);
  }
  int same = 0;
  for (uint32_t i = 0; i < 1000; ++i)
    same += shuffle_index(i, 1000, epoch_seed(1, 0)) == shuffle_index(i, 1000, epoch_seed(1, 1));
  CHECK(same < 20);
}

TEST_CASE("registry: unknown and not-compiled-in backends give clear errors") {
  CHECK(error_of([] { make_backend("tpu"); }).find("unknown backend 'tpu'") != std::string::npos);
  bool all_in = true;
  for (const auto& n : known_backend_names()) {
    bool in = false;
    for (const auto& e : compiled_backends()) in |= e.name == n;
    if (!in) {
      CHECK(error_of([&] { make_backend(n); }).find("not compiled into this build") !=
            std::string::npos);
      all_in = false;
    }
  }
  CHECK(compiled_backends().back().name == "serial");
  (void)all_in;
}

}  // TEST_SUITE

}  // namespace pcnn::test
