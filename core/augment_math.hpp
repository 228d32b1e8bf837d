// The per-image and per-pixel formulas of data augmentation (op augment_batch), shared by every
// backend so they draw the same parameters and compute the same samples; a backend only loops.
//
// Image j of a training step gets its parameters from a counter-based hash of (seed, image),
// image = *step * N + j: the position of that image in the run's stream of training images. A
// replica's counter is step * R + r and its batch N / R, which gives the same position, so a
// data-parallel run augments exactly like one device. Reading *step on the device keeps the op
// inside a captured graph: every replay draws anew.
//
// Output pixel (r, c) of an H x W image is sampled (bilinear) at source coordinates built in
// this order: flip (c -> W-1-c), crop (shift by the crop offsets: a random H x W window of the
// image padded by crop_pad), affine about the centre ((H-1)/2, (W-1)/2), plus the elastic
// displacement at (r, c). One resampling, so a composition blurs no more than one method.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/augment_config.hpp"
#include "core/host_device.hpp"
#include "core/shuffle.hpp"

namespace pcnn {

// ---- the hash --------------------------------------------------------------------------------

PCNN_HD inline uint32_t augment_hash(uint32_t key, uint32_t counter) {
  return mix32(key ^ mix32(counter * 0x9e3779b9u + 0x7f4a7c15u));
}

// Uniform in [-1, 1): 24 random bits, exact in float.
PCNN_HD inline float augment_uniform(uint32_t key, uint32_t counter) {
  return float(augment_hash(key, counter) >> 8) * (1.f / 8388608.f) - 1.f;
}

// The key of image j of the step whose counter is step, in batches of n.
PCNN_HD inline uint32_t augment_image_key(uint32_t seed, int32_t step, int n, int j) {
  const uint64_t image = uint64_t(uint32_t(step)) * uint64_t(n) + uint64_t(j);
  const uint32_t k = augment_hash(mix32(seed ^ 0x5bd1e995u), uint32_t(image));
  return augment_hash(k, uint32_t(image >> 32));
}

// ---- per image -------------------------------------------------------------------------------

// Counters of the per-image draws under the image key.
enum AugmentSlot : uint32_t { kSlotRotate = 0, kSlotScale, kSlotShear, kSlotCropY, kSlotCropX,
                              kSlotFlip, kSlotNoise };

struct AugmentImage {
  float m00 = 1, m01 = 0, m10 = 0, m11 = 1;  // (x, y) from the centre -> source, x = column
  int shift_y = 0, shift_x = 0;              // crop offsets
  bool flip = false;
  uint32_t noise_key = 0;                    // the elastic noise's
};

// A whole offset in [-pad, pad].
PCNN_HD inline int augment_offset(uint32_t key, uint32_t slot, int pad) {
  return int(augment_hash(key, slot) % uint32_t(2 * pad + 1)) - pad;
}

// Rotation R(theta) times scale s times shear [[1, k], [0, 1]]; with zero magnitudes the
// identity exactly (sinf(0) = 0, cosf(0) = 1).
PCNN_HD inline AugmentImage augment_image(const AugmentConfig& a, uint32_t key) {
  AugmentImage im;
  if (a.affine) {
    const float theta = augment_uniform(key, kSlotRotate) * a.affine_rotate * 0.017453292519943295f;
    const float s = 1.f + augment_uniform(key, kSlotScale) * a.affine_scale;
    const float k = augment_uniform(key, kSlotShear) * a.affine_shear;
    const float cs = cosf(theta), sn = sinf(theta);
    im.m00 = s * cs;
    im.m01 = s * fmaf(cs, k, -sn);
    im.m10 = s * sn;
    im.m11 = s * fmaf(sn, k, cs);
  }
  if (a.crop) {
    im.shift_y = augment_offset(key, kSlotCropY, a.crop_pad);
    im.shift_x = augment_offset(key, kSlotCropX, a.crop_pad);
  }
  if (a.flip)  // 24 bits against the probability: 0 never flips, 1 always does
    im.flip = float(augment_hash(key, kSlotFlip) >> 8) * (1.f / 16777216.f) < a.flip_probability;
  im.noise_key = augment_hash(key, kSlotNoise);
  return im;
}

// ---- the elastic field -----------------------------------------------------------------------

// The Gaussian's taps w[t + radius], t in [-radius, radius], radius = ceil(3 sigma), summing
// to 1. Computed on the host (once per call) and passed to the kernels by value, so every
// backend smooths with the same floats.
struct ElasticTaps {
  int radius = 0;
  float w[2 * kMaxElasticRadius + 1] = {};
};

inline ElasticTaps elastic_taps(float sigma) {
  ElasticTaps t;
  int radius = int(std::ceil(3.0 * double(sigma)));
  t.radius = radius < 0 ? 0 : (radius > kMaxElasticRadius ? kMaxElasticRadius : radius);
  double w[2 * kMaxElasticRadius + 1], sum = 0;
  for (int i = -t.radius; i <= t.radius; ++i)
    sum += w[i + t.radius] = std::exp(-0.5 * double(i) * double(i) / (double(sigma) * sigma));
  for (int i = 0; i <= 2 * t.radius; ++i) t.w[i] = float(w[i] / sum);
  return t;
}

// The noise at e = (comp * H + r) * W + c of the (2, H, W) planes (comp 0: x, 1: y), uniform
// in [-1, 1).
PCNN_HD inline float elastic_noise(uint32_t noise_key, int e) {
  return augment_uniform(noise_key, uint32_t(e));
}

// Smoothing along a line of n values at stride apart (a row: stride 1; a column: W): position
// i of the line, zero outside it, taps in ascending order (the same sum everywhere).
PCNN_HD inline float elastic_smooth(const float* line, int n, int stride, int i,
                                    const ElasticTaps& t) {
  const int lo = i - t.radius < 0 ? -i : -t.radius;
  const int hi = i + t.radius > n - 1 ? n - 1 - i : t.radius;
  float acc = 0.f;
  for (int d = lo; d <= hi; ++d) acc = fmaf(t.w[d + t.radius], line[(i + d) * stride], acc);
  return acc;
}

// The op's scratch per image: 4 planes of H x W floats: the noise of x and y, then each
// smoothed along its rows.
constexpr int kElasticScratchPlanes = 4;

// The elastic displacement at (r, c): alpha times the row-smoothed planes (x, then y at
// +H*W) smoothed along column c.
PCNN_HD inline void elastic_displacement(const float* row_smoothed, int H, int W, int r, int c,
                                         const ElasticTaps& t, float alpha, float& ex,
                                         float& ey) {
  ex = alpha * elastic_smooth(row_smoothed + c, H, W, r, t);
  ey = alpha * elastic_smooth(row_smoothed + H * W + c, H, W, r, t);
}

// ---- the sample ------------------------------------------------------------------------------

// Where output pixel (r, c) reads: (ys, xs) in source pixels. ex, ey: the elastic
// displacement there (alpha times the smoothed field), 0 without elastic.
PCNN_HD inline void augment_source(const AugmentImage& im, int H, int W, int r, int c, float ex,
                                   float ey, float& ys, float& xs) {
  const float cy = 0.5f * float(H - 1), cx = 0.5f * float(W - 1);
  const float u = float((im.flip ? W - 1 - c : c) + im.shift_x) - cx;
  const float v = float(r + im.shift_y) - cy;
  xs = fmaf(im.m00, u, fmaf(im.m01, v, cx + ex));
  ys = fmaf(im.m10, u, fmaf(im.m11, v, cy + ey));
}

PCNN_HD inline float plane_value(const float* plane, int H, int W, int y, int x, float fill) {
  return (y >= 0 && y < H && x >= 0 && x < W) ? plane[y * W + x] : fill;
}

// Bilinear sample of an H x W plane at (ys, xs); a tap outside the plane reads fill. At whole
// coordinates it is the pixel itself, exactly. Continuous in (ys, xs), so backends whose
// coordinates differ by ulps (sinf, cosf) differ by about as little.
PCNN_HD inline float bilinear_sample(const float* plane, int H, int W, float ys, float xs,
                                     float fill) {
  // Clamped where every tap is outside anyway: keeps the int conversion in range.
  ys = fminf(fmaxf(ys, -2.f), float(H) + 1.f);
  xs = fminf(fmaxf(xs, -2.f), float(W) + 1.f);
  const float fy0 = floorf(ys), fx0 = floorf(xs);
  const int y0 = int(fy0), x0 = int(fx0);
  const float fy = ys - fy0, fx = xs - fx0;
  const float v00 = plane_value(plane, H, W, y0, x0, fill);
  const float v01 = plane_value(plane, H, W, y0, x0 + 1, fill);
  const float v10 = plane_value(plane, H, W, y0 + 1, x0, fill);
  const float v11 = plane_value(plane, H, W, y0 + 1, x0 + 1, fill);
  const float top = fmaf(fx, v01 - v00, v00), bottom = fmaf(fx, v11 - v10, v10);
  return fmaf(fy, bottom - top, top);
}

}  // namespace pcnn
