// Conv2D with an optional fused epilogue (activation, then max/avg pooling): one layer whether or
// not the backend fuses, since the fused entry points have composed defaults.
#pragma once

#include "backends/device_array.hpp"
#include "layers/layer.hpp"

namespace pcnn {

struct Conv2dParams {
  int maps = 1, kernel = 5, stride = 1, pad = 0;
  ConvEpilogue epilogue;
  InitKind init = InitKind::Xavier;
};

class Conv2D : public WeightedLayer {
 public:
  Conv2D(FeatureShape in, const Conv2dParams& p);
  std::string describe() const override;
  void setup(Backend& be, int max_batch) override;
  size_t kept_bytes_per_sample() const override;
  size_t workspace_floats_per_sample() const override;
  PCNN_LAYER_PASSES
  PCNN_LAYER_PASSES_16
  bool reads_fp32_input16() const override { return true; }
  void forward16_fp32_input(Backend& be, int N, Precision p, const float* x,
                            uint16_t* y) override;
  void backward16_fp32_input(Backend& be, int N, Precision p, const float* x, const uint16_t* y,
                             const uint16_t* dy) override;
  size_t staging_floats_per_sample(const Staging16& st) const override {
    return st.conv ? Layer::staging_floats_per_sample(st) : 0;
  }
  double forward_flops(int N) const override { return shape(N).forward_flops(); }

  Conv2dShape shape(int N) const;
  const Conv2dParams& params() const { return p_; }

 private:
  Conv2dParams p_;
  DeviceArray<uint8_t> kept_;  // what the fused backward reads besides y (core/shapes.hpp)
  ConvKept kept_view_;         // kept_ as the backend's fused ops take it
};

}  // namespace pcnn
