// pcnn::api::NetworkBuilder: a model spec written in code, one call per layer, checked by the
// same check_spec as a JSON spec.
#include "api/pcnn.hpp"
#include "models/spec_check.hpp"

namespace pcnn::api {

NetworkBuilder::NetworkBuilder(std::string name, int channels, int height, int width) {
  spec_.name = std::move(name);
  spec_.in_c = channels;
  spec_.in_h = height;
  spec_.in_w = width;
}

namespace {
// A new last layer of the given type, its other fields at their defaults.
LayerSpec& append(ModelSpec& spec, const std::string& type) {
  spec.layers.emplace_back();
  spec.layers.back().type = type;
  return spec.layers.back();
}
}  // namespace

NetworkBuilder& NetworkBuilder::conv(int maps, int kernel, int stride, int pad,
                                     const std::string& activation) {
  LayerSpec& l = append(spec_, "conv");
  l.units = maps;
  l.kernel = kernel;
  l.stride = stride;
  l.pad = pad;
  l.act = activation;
  return *this;
}

NetworkBuilder& NetworkBuilder::maxpool(int window, int stride) {
  LayerSpec& l = append(spec_, "maxpool");
  l.kernel = window;
  l.stride = stride == 0 ? window : stride;
  return *this;
}

NetworkBuilder& NetworkBuilder::avgpool(int window, int stride) {
  maxpool(window, stride);
  spec_.layers.back().type = "avgpool";
  return *this;
}

NetworkBuilder& NetworkBuilder::flatten() {
  append(spec_, "flatten");
  return *this;
}

NetworkBuilder& NetworkBuilder::dense(int units, const std::string& activation) {
  LayerSpec& l = append(spec_, "dense");
  l.units = units;
  l.act = activation;
  return *this;
}

NetworkBuilder& NetworkBuilder::activation(const std::string& name) {
  append(spec_, name);
  return *this;
}

NetworkBuilder& NetworkBuilder::dropout(double rate) {
  LayerSpec& l = append(spec_, "dropout");
  l.rate = rate;
  return *this;
}

NetworkBuilder& NetworkBuilder::global_avgpool() {
  append(spec_, "globalavgpool");
  return *this;
}

NetworkBuilder& NetworkBuilder::pad(int pad) {
  PCNN_CHECK(!spec_.layers.empty() &&
                 (spec_.layers.back().type == "maxpool" || spec_.layers.back().type == "avgpool"),
             "network '" << spec_.name << "': pad() follows a maxpool or avgpool");
  spec_.layers.back().pad = pad;
  return *this;
}

ModelSpec NetworkBuilder::spec() const {
  ModelSpec s = spec_;
  // The classes are the logits: the units of the last layer, which check_spec requires to be
  // a dense layer.
  PCNN_CHECK(!s.layers.empty() && s.layers.back().type == "dense",
             "network '" << s.name
                         << "': the last layer must be dense (its units are the classes)");
  s.classes = s.layers.back().units;
  check_spec(s);
  return s;
}

}  // namespace pcnn::api
