// Stand-alone max / average pooling (unfused models, and padded pools; fused ones pool inside
// Conv2D). Padding is never read: windows are clipped to the image (core/pool_math.hpp).
#pragma once

#include "layers/layer.hpp"

namespace pcnn {

class Pool2D : public Layer {
 public:
  Pool2D(FeatureShape in, PoolKind kind, int window, int stride, int pad = 0);
  std::string describe() const override;
  PCNN_LAYER_PASSES
  PCNN_PER_ELEMENT_FLOPS

 private:
  Pool2dShape shape(int N) const;
  PoolKind kind_;
  int window_, stride_, pad_;
};

}  // namespace pcnn
