// What data augmentation a training run applies, and the bounds of its magnitudes (the CLI,
// the checkpoint reader and the api check against them). The op augment_batch
// (core/op_list.hpp) takes it by value; core/augment_math.hpp holds the formulas.
#pragma once

namespace pcnn {

// The elastic field's Gaussian is cut at 3 sigma; sigma <= 16 keeps it within 48 pixels, so
// the taps fit in a fixed array passed by value to a kernel.
constexpr double kMaxElasticSigma = 16.;
constexpr int kMaxElasticRadius = 48;
constexpr double kMaxElasticAlpha = 1000.;  // pixels per unit of the smoothed field
constexpr double kMaxAffineRotate = 180.;   // degrees
constexpr double kMaxAffineScale = 0.9;     // the factor stays above 0
constexpr double kMaxAffineShear = 2.;
constexpr int kMaxCropPad = 64;             // pixels

// Each method is off unless its flag is set. The per-image parameters are drawn uniformly:
// rotation in [-affine_rotate, affine_rotate] degrees, scale factor in [1 - affine_scale,
// 1 + affine_scale], shear factor in [-affine_shear, affine_shear], crop offsets in
// [-crop_pad, crop_pad] pixels, flip with probability flip_probability. The elastic field is
// uniform noise in [-1, 1] per pixel, smoothed by a Gaussian of elastic_sigma pixels (weights
// summing to 1) and scaled by elastic_alpha: Simard et al. (2003) use sigma 4, alpha 34 on
// 28x28 digits. The default alpha is 12: on Fashion-MNIST (the default data) the paper's 34
// distorts clothes past recognition and costs test accuracy, 12 gains it (README, H200 runs).
struct AugmentConfig {
  bool elastic = false, affine = false, crop = false, flip = false;
  float elastic_alpha = 12.f, elastic_sigma = 4.f;
  float affine_rotate = 10.f, affine_scale = 0.1f, affine_shear = 0.1f;
  int crop_pad = 4;
  float flip_probability = 0.5f;

  bool any() const { return elastic || affine || crop || flip; }
  bool operator==(const AugmentConfig& o) const {
    return elastic == o.elastic && affine == o.affine && crop == o.crop && flip == o.flip &&
           elastic_alpha == o.elastic_alpha && elastic_sigma == o.elastic_sigma &&
           affine_rotate == o.affine_rotate && affine_scale == o.affine_scale &&
           affine_shear == o.affine_shear && crop_pad == o.crop_pad &&
           flip_probability == o.flip_probability;
  }
  bool operator!=(const AugmentConfig& o) const { return !(*this == o); }
};

}  // namespace pcnn
