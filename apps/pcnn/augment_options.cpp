// pcnn train's augmentation options (apps/pcnn/augment_options.hpp says what each check does).
#include "apps/pcnn/augment_options.hpp"

#include <algorithm>
#include <cstdio>

#include "apps/pcnn/options.hpp"

namespace pcnn::cli {

namespace {
const std::vector<std::string> kMethods = {"elastic", "affine", "crop", "flip"};

// Each magnitude option and the method it belongs to.
struct Magnitude {
  const char* option;
  const char* method;
};
const Magnitude kMagnitudes[] = {{"--elastic-alpha", "elastic"}, {"--elastic-sigma", "elastic"},
                                 {"--affine-rotate", "affine"},  {"--affine-scale", "affine"},
                                 {"--affine-shear", "affine"},   {"--crop-pad", "crop"}};

std::string number(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

bool has(const std::vector<std::string>& methods, const std::string& m) {
  return std::find(methods.begin(), methods.end(), m) != methods.end();
}
}  // namespace

// The magnitude options, one row each (flag, AugmentConfig field, help, validator): registered
// and compared on --resume from this one list, so a new magnitude cannot miss either.
#define PCNN_AUGMENT_MAGNITUDES(X)                                                           \
  X("--elastic-alpha", elastic_alpha,                                                        \
    "elastic: displacement scale in pixels (Simard 2003 used 34 on 28x28 digits)",           \
    real_number<float>({0, false, kMaxElasticAlpha, false}))                                 \
  X("--elastic-sigma", elastic_sigma,                                                        \
    "elastic: the smoothing Gaussian's sigma in pixels, in (0, 16]",                         \
    real_number<float>({0, true, kMaxElasticSigma, false}))                                  \
  X("--affine-rotate", affine_rotate, "affine: rotation up to +- this, degrees",            \
    real_number<float>({0, false, kMaxAffineRotate, false}))                                 \
  X("--affine-scale", affine_scale, "affine: scale factor in 1 +- this",                    \
    real_number<float>({0, false, kMaxAffineScale, false}))                                  \
  X("--affine-shear", affine_shear, "affine: shear factor up to +- this",                   \
    real_number<float>({0, false, kMaxAffineShear, false}))                                  \
  X("--crop-pad", crop_pad,                                                                  \
    "crop: a random crop at the original size of the image zero-padded by this many pixels", \
    whole_number(0, kMaxCropPad))

void add_augment_options(CLI::App& app, AugmentOptions& o) {
  AugmentConfig& m = o.magnitudes;
  app.add_option("--augment", o.methods,
                 "augment each training batch on the device, comma-separated: elastic, affine, "
                 "crop, flip (composed into one resampling; never at evaluation)")
      ->delimiter(',')
      ->check(one_of(kMethods, "augmentation"));
#define PCNN_ADD_MAGNITUDE(flag, field, help, valid) \
  app.add_option(flag, m.field, help)->check(valid)->capture_default_str();
  PCNN_AUGMENT_MAGNITUDES(PCNN_ADD_MAGNITUDE)
#undef PCNN_ADD_MAGNITUDE
}

AugmentConfig augment_config(const AugmentOptions& o, const CLI::App& app) {
  for (size_t i = 0; i < o.methods.size(); ++i)
    if (std::count(o.methods.begin(), o.methods.begin() + i, o.methods[i]))
      throw CLI::ValidationError("--augment", "'" + o.methods[i] + "' is given twice");
  for (const Magnitude& m : kMagnitudes)
    if (app.count(m.option) && !has(o.methods, m.method))
      throw CLI::ValidationError(m.option, std::string("applies to ") + m.method +
                                 ", which --augment does not list");
  AugmentConfig a = o.magnitudes;
  a.elastic = has(o.methods, "elastic");
  a.affine = has(o.methods, "affine");
  a.crop = has(o.methods, "crop");
  a.flip = has(o.methods, "flip");
  return a;
}

std::string augment_methods(const AugmentConfig& a) {
  std::string s;
  for (const auto& [on, name] : {std::pair{a.elastic, "elastic"}, {a.affine, "affine"},
                                 {a.crop, "crop"}, {a.flip, "flip"}})
    if (on) s += (s.empty() ? "" : ",") + std::string(name);
  return s;
}

std::string augment_text(const AugmentConfig& a) {
  std::string s;
  const auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (a.elastic)
    add("elastic (alpha " + number(a.elastic_alpha) + ", sigma " + number(a.elastic_sigma) + ")");
  if (a.affine)
    add("affine (rotate " + number(a.affine_rotate) + ", scale " + number(a.affine_scale) +
        ", shear " + number(a.affine_shear) + ")");
  if (a.crop) add("crop (pad " + std::to_string(a.crop_pad) + ")");
  if (a.flip) add("flip (p " + number(a.flip_probability) + ")");
  return s;
}

void check_same_augment(const ResumeCheck& check, const AugmentOptions& given,
                        const AugmentConfig& saved) {
  AugmentConfig g = given.magnitudes;
  for (const std::string& m : given.methods) {
    g.elastic |= m == "elastic";
    g.affine |= m == "affine";
    g.crop |= m == "crop";
    g.flip |= m == "flip";
  }
  const auto shown = [](const std::string& list) { return list.empty() ? "none" : list; };
  check.same("--augment", shown(augment_methods(g)), shown(augment_methods(saved)));
#define PCNN_CHECK_MAGNITUDE(flag, field, help, valid) check.same(flag, g.field, saved.field);
  PCNN_AUGMENT_MAGNITUDES(PCNN_CHECK_MAGNITUDE)
#undef PCNN_CHECK_MAGNITUDE
}

}  // namespace pcnn::cli
