// Stand-alone max / average pooling (unfused models, and padded pools; fused ones pool inside
// Conv2D). Padding is never read: windows are clipped to the image (core/pool_math.hpp).
#pragma once

#include "layers/layer.hpp"

namespace pcnn {

class Pool2D : public Layer {
 public:
  Pool2D(FeatureShape in, PoolKind kind, int window, int stride, int pad = 0);
  std::string describe() const override;
  void forward(Backend& be, int N, const float* x, float* y) override;
  void backward(Backend& be, int N, const float* x, const float* y, const float* dy,
                float* dx) override;
  double forward_flops(int N) const override { return double(N) * in_.size(); }
  double backward_flops(int N) const override { return forward_flops(N); }

 private:
  Pool2dShape shape(int N) const;
  PoolKind kind_;
  int window_, stride_, pad_;
};

}  // namespace pcnn
