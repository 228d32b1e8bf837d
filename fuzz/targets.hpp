// The fuzz targets over ParallelCNN's parsers of untrusted files, as plain functions: the
// libFuzzer programs call them (fuzz/libfuzzer_main.cpp), and the test suite replays the seed
// corpora and every crash ever found through them (tests/test_fuzz_corpus.cpp).
// Rejecting an input (pcnn::Error) is a pass. Anything else escaping is a finding: another
// exception type (an unwrapped nlohmann or std::bad_alloc error), a sanitizer report, or a
// FuzzFailure, thrown when an accepted input breaks an invariant (e.g. a spec that saves but
// cannot be loaded again).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace pcnn {
class Backend;
}

namespace pcnn::fuzz {

struct FuzzFailure : std::logic_error {
  using std::logic_error::logic_error;
};

// First byte odd: the rest is written as a raw file; even: gzipped first. Then read_idx.
void idx_target(const uint8_t* data, size_t size);
// decode_model, then encode -> decode -> encode must reproduce the model and the bytes.
void model_file_target(const uint8_t* data, size_t size);
// model_spec_from_json, the round trip spec -> JSON -> spec (plain and fused), and building and
// running the layers on be where the spec is small enough to be quick; be's logits and gradients
// must agree with serial's.
void model_spec_check(Backend& be, const uint8_t* data, size_t size);
// model_spec_check on openmp where the fuzzing build has it, else on serial.
void model_spec_target(const uint8_t* data, size_t size);

// The CIFAR-10/100 folder loader: byte 0 the variant, byte 1 the length of the class-name text
// that follows, the rest one record file (fuzz/cifar_target.cpp); what loads must be the records.
void cifar_target(const uint8_t* data, size_t size);
// decode_image on the input (a PNG or a JPEG file), then channel and size conversions; the two
// differ only in their seeds.
void png_target(const uint8_t* data, size_t size);
void jpeg_target(const uint8_t* data, size_t size);
// The image targets' pixel limit: a header may claim up to 512 x 512 pixels, so a run stays in
// milliseconds (the reader's real limit, kMaxImagePixels, is the same check with a larger number).
constexpr int64_t kFuzzMaxImagePixels = int64_t(1) << 18;

// Throws FuzzFailure(what) when ok is false.
inline void require(bool ok, const std::string& what) {
  if (!ok) throw FuzzFailure(what);
}

}  // namespace pcnn::fuzz
