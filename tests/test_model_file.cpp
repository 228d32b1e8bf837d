// The model file format: safetensors layout, round trip with provenance, identical bytes for
// equal weights, atomic writes, and a one-line refusal for every corrupt, cut, foreign, old or
// inconsistent file.
#include <zlib.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "models/model.hpp"
#include "models/serialize.hpp"
#include "models/tensor_file.hpp"
#include "tests/hostile_files.hpp"

namespace pcnn::test {

namespace {
SavedModel tiny_model() {
  SavedModel m;
  m.spec = model_spec_from_json(nlohmann::json::parse(R"({"name": "tiny", "input": [1, 5, 5],
      "classes": 2, "layers": [{"type": "conv", "units": 2, "kernel": 3}, {"type": "tanh"},
      {"type": "flatten"}, {"type": "dense", "units": 2}]})"));
  m.mean = 0.125f;
  m.inv_std = 3.5f;
  m.params = initial_params(m.spec, 11);
  return m;
}

Provenance full_provenance() {
  Provenance p;
  p.data_folder = "/data/fashion";
  p.data_files = {"a.gz", "b.gz", "c", "d"};
  p.train_count = 60000;
  p.test_count = 10000;
  p.train_labels_crc32 = "0000abcd";
  p.test_labels_crc32 = "ffff0000";
  p.recipe = "adam lr 0.002, batch 64; \"quoted\"";
  p.epochs = 7;
  p.final_accuracy = 0.9071;
  return p;
}

// Rewrites the stored crc32 so that a deliberate edit is judged on its own (not as corruption).
std::string resealed(std::string bytes) {
  const size_t at = bytes.find("\"crc32\":\"") + 9;
  bytes.replace(at, 8, "00000000");
  bytes.replace(at, 8, crc32_text(uint32_t(crc32_z(crc32_z(0, nullptr, 0),
                                                   reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()))));
  return bytes;
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}
}  // namespace

TEST_SUITE("core") {

TEST_CASE("model files: safetensors layout, round trip with provenance, deterministic bytes") {
  SavedModel m = tiny_model();
  m.provenance = full_provenance();
  const std::string p = scratch_path("m.pcnn");
  save_model(p, m);
  const SavedModel back = load_model(p);
  CHECK(back.params == m.params);
  CHECK(back.mean == m.mean);
  CHECK(back.inv_std == m.inv_std);
  CHECK(to_json(back.spec) == to_json(m.spec));
  CHECK(back.provenance == m.provenance);
  CHECK(back.written_by == pcnn_version());
  CHECK(load_model(p).provenance.recipe == m.provenance.recipe);
  // Equal weights, equal files: nothing depends on the time or the run.
  save_model(scratch_path("m2.pcnn"), back);
  CHECK(read_bytes(p) == read_bytes(scratch_path("m2.pcnn")));
  CHECK(encode_model(m) == encode_model(back));
  // The layout a safetensors reader expects: u64 header length, a JSON object, aligned data.
  const std::string b = read_bytes(p);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | uint8_t(b[size_t(i)]);
  REQUIRE(8 + n <= b.size());
  CHECK((8 + n) % 8 == 0);
  const auto h = nlohmann::json::parse(b.substr(8, n));
  CHECK(h["__metadata__"]["format"] == "pcnn-model");
  CHECK(h["__metadata__"]["format_version"] == "3");
  CHECK(h["layers.0.weight"]["shape"] == nlohmann::json{2, 1, 3, 3});
  CHECK(h["layers.3.weight"]["shape"] == nlohmann::json{2, 18});
  CHECK(h["layers.3.bias"]["data_offsets"][1] == b.size() - 8 - n);
  // The first weight, read as a little-endian float at its offset.
  const size_t w0 = 8 + n + h["layers.0.weight"]["data_offsets"][0].get<size_t>();
  uint32_t u = 0;
  for (int i = 3; i >= 0; --i) u = u << 8 | uint8_t(b[w0 + size_t(i)]);
  float f;
  std::memcpy(&f, &u, 4);
  CHECK(f == m.params[0]);
  // Without provenance, the defaults come back.
  CHECK(decode_model(encode_model(tiny_model()), "x").provenance == Provenance());
}

TEST_CASE("model files: a byte changed anywhere, or a file cut anywhere, is refused") {
  const std::string good = encode_model(tiny_model());
  for (size_t i = 0; i < good.size(); ++i)
    for (const unsigned char flip : {0x01, 0x80}) {
      std::string bad = good;
      bad[i] = char(bad[i] ^ flip);
      INFO("byte " << i << " xor " << int(flip));
      CHECK_FALSE(refusal([&] { decode_model(bad, "m.pcnn"); }).empty());
    }
  for (size_t len = 0; len < good.size(); ++len) {
    INFO("cut to " << len << " bytes");
    const std::string msg = refusal([&] { decode_model(good.substr(0, len), "m.pcnn"); });
    CHECK_MESSAGE((msg.find("truncated") != std::string::npos ||
                   msg.find("not a ParallelCNN model file") != std::string::npos ||
                   msg.find("corrupt header") != std::string::npos), msg);
  }
  PCNN_CHECK_REFUSED([&] { decode_model(good.substr(0, good.size() - 3), "m.pcnn"); }, "'m.pcnn' is truncated");
  std::string flipped = good;
  flipped[good.size() - 5] ^= 0x10;  // inside the last tensor: only the checksum can tell
  PCNN_CHECK_REFUSED([&] { decode_model(flipped, "m.pcnn"); }, "checksum mismatch");
  PCNN_CHECK_REFUSED([&] { decode_model(good + "x", "m.pcnn"); }, "1 bytes after its last tensor");
}

TEST_CASE("model files: foreign, old-format, newer and inconsistent files name their fault") {
  const std::string good = encode_model(tiny_model());
  PCNN_CHECK_REFUSED([&] { decode_model("PCNNMODEL1\n{\"spec\": {}}\n", "old.pcnn"); },
                     "'old.pcnn' is a format-1 ParallelCNN model file", "train and save the model again");
  PCNN_CHECK_REFUSED([&] { decode_model("hello", "h"); }, "is not a ParallelCNN model file");
  PCNN_CHECK_REFUSED([&] { decode_model(std::string(8, '\xff') + "{}", "h"); }, "truncated");
  PCNN_CHECK_REFUSED([&] { decode_model(resealed(replaced(good, "\"format_version\":\"3\"", "\"format_version\":\"4\"")), "v4"); },
                     "'v4' has format version \"4\" (written by pcnn \"", "reads versions 2 to 3");
  PCNN_CHECK_REFUSED([&] { decode_model(resealed(replaced(good, "\"format_version\":\"3\"", "\"format_version\":\"1\"")), "v1"); },
                     "'v1' has format version \"1\"", "reads versions 2 to 3");
  PCNN_CHECK_REFUSED([&] { decode_model(resealed(replaced(good, "pcnn-model", "pcnn-other")), "o"); },
                     "is not a ParallelCNN model file (its format is \"pcnn-other\")");
  // A safetensors file from elsewhere (no pcnn metadata).
  TensorFile foreign;
  foreign.tensors = {{"w", {2}, {1.f, 2.f}}};
  std::string st = encode_tensor_file(foreign, {"pcnn-model", "x"});
  PCNN_CHECK_REFUSED([&] { decode_model(resealed(replaced(st, "\"__metadata__\"", "\"__metadata_x\"")), "st"); },
                     "'st' is not a ParallelCNN model file (a safetensors file without ParallelCNN metadata)");
  // Tensors that disagree with the spec, built with the container itself so the checksum holds.
  const SavedModel m = tiny_model();
  TensorFile f;
  f.metadata = {{"spec", to_json(m.spec).dump()}, {"mean", "0.5"}, {"inv_std", "2"}};
  const std::vector<float> w(18, 0.1f);
  f.tensors = {{"layers.0.weight", {2, 1, 3, 3}, w}, {"layers.0.bias", {2}, {0, 0}},
               {"layers.3.weight", {2, 18}, std::vector<float>(36)}, {"layers.3.bias", {2}, {0, 0}}};
  const FileKind kind{"pcnn-model", "ParallelCNN model file"};
  CHECK(decode_model(encode_tensor_file(f, kind), "ok").params.size() == m.params.size());
  TensorFile g = f;
  g.tensors[0] = {"layers.0.weight", {2, 9}, w};
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); },
                     "tensor 'layers.0.weight' of shape [2,9], its spec needs [2,1,3,3]");
  g = f;
  g.tensors.pop_back();
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); }, "no tensor 'layers.3.bias'");
  g = f;
  g.tensors.push_back({"extra", {1}, {1.f}});
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); }, "tensor \"extra\", which its spec does not have");
  g = f;
  g.tensors[1].data[1] = std::nanf("");
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); }, "NaN or Inf in tensor 'layers.0.bias' (value 1)");
  g = f;
  g.metadata["inv_std"] = "0";
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); }, "'inv_std' 0");
  g.metadata["inv_std"] = "inf";
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); }, "'inv_std'");
  g = f;
  g.metadata.erase("spec");
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); }, "no 'spec'");
  g = f;
  g.metadata["spec"] = R"({"input": [1, 5, 5], "classes": 2, "layers": [{"type": "maxpool", "kernel": 0}]})";
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); }, "'s' has a bad header", "layer 0 (maxpool)");
  g = f;
  g.metadata["provenance.epochs"] = "seven";
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(g, kind), "s"); }, "provenance.epochs");
}

TEST_CASE("model files: a version-2 file (before models had state) still loads") {
  // A version-2 file is a version-3 file without state tensors, which models without batchnorm
  // layers have none of: the same bytes but the version, resealed.
  const SavedModel m = tiny_model();
  const std::string v3 = encode_model(m);
  const std::string v2 = resealed(replaced(v3, "\"format_version\":\"3\"", "\"format_version\":\"2\""));
  const SavedModel back = decode_model(v2, "v2.pcnn");
  CHECK(back.params == m.params);
  CHECK(back.state.empty());
  CHECK(to_json(back.spec) == to_json(m.spec));
  // One with a batchnorm layer needs its running statistics, whatever its version.
  SavedModel bn;
  bn.spec = model_spec_from_json(nlohmann::json::parse(R"({"name": "bn", "input": [1, 5, 5],
      "classes": 2, "layers": [{"type": "conv", "units": 2, "kernel": 3}, {"type": "batchnorm"},
      {"type": "flatten"}, {"type": "dense", "units": 2}]})"));
  bn.params = initial_params(bn.spec, 3);
  bn.state = {0.5f, -0.25f, 2.f, 3.f};
  CHECK(decode_model(encode_model(bn), "bn").state == bn.state);
  TensorFile f;
  f.metadata = {{"spec", to_json(bn.spec).dump()}, {"mean", "0.5"}, {"inv_std", "2"}};
  f.tensors = {{"layers.0.weight", {2, 1, 3, 3}, std::vector<float>(18, 0.1f)},
               {"layers.0.bias", {2}, {0, 0}}, {"layers.1.weight", {2}, {1, 1}},
               {"layers.1.bias", {2}, {0, 0}}, {"layers.1.running_mean", {2}, {0, 0}},
               {"layers.3.weight", {2, 18}, std::vector<float>(36)}, {"layers.3.bias", {2}, {0, 0}}};
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(f, {"pcnn-model", "x"}), "s"); },
                     "'s' has no tensor 'layers.1.running_var', which its spec needs");
  f.tensors.push_back({"layers.1.running_var", {2}, {1, std::nanf("")}});
  PCNN_CHECK_REFUSED([&] { decode_model(encode_tensor_file(f, {"pcnn-model", "x"}), "s"); },
                     "NaN or Inf in tensor 'layers.1.running_var' (value 1)");
}

TEST_CASE("model files: written atomically, a stale temporary replaced, a bad folder named") {
  const std::string p = scratch_path("atomic.pcnn");
  write_bytes(p + ".tmp", "left by a killed run");
  save_model(p, tiny_model());
  CHECK_FALSE(std::ifstream(p + ".tmp").good());
  CHECK(load_model(p).params == tiny_model().params);
  PCNN_CHECK_REFUSED([] { save_model("/nonexistent-pcnn-dir/m.pcnn", tiny_model()); },
                     "cannot write '/nonexistent-pcnn-dir/m.pcnn.tmp'");
  PCNN_CHECK_REFUSED([] { load_model("/tmp"); }, "is not a regular file");
  PCNN_CHECK_REFUSED([] { load_model("/nonexistent-pcnn-dir/m.pcnn"); }, "cannot open model file");
  SavedModel wrong = tiny_model();
  wrong.params.pop_back();
  PCNN_CHECK_REFUSED([&] { save_model(p, wrong); }, "parameters, its spec needs");
  CHECK(load_model(p).params == tiny_model().params);  // the old file is still whole
}

TEST_CASE("provenance: data sets are told apart by counts and label hashes") {
  Provenance a = full_provenance(), b = full_provenance();
  CHECK(data_difference(a, b).empty());
  b.test_labels_crc32 = "12345678";
  CHECK(data_difference(a, b).find("test labels differ") != std::string::npos);
  b = a;
  b.test_count = 8000;
  CHECK(data_difference(a, b).find("given 60000 / 8000") != std::string::npos);
  CHECK(data_difference(Provenance(), b).empty());  // an old model knows nothing: no warning
}

}  // TEST_SUITE

}  // namespace pcnn::test
