// What a library user picks from: the backends compiled in, model specs by name or file, and
// image files for predict().
#include "api/pcnn.hpp"
#include "backends/registry.hpp"
#include "data/idx.hpp"

namespace pcnn::api {

std::vector<BackendInfo> backends() {
  std::vector<BackendInfo> out;
  for (const BackendEntry& e : compiled_backends()) {
    BackendInfo b;
    b.name = e.name;
    b.why_not = unusable_reason(e.name);
    b.usable = b.why_not.empty();
    out.push_back(b);
  }
  return out;
}

ModelSpec model_spec(const std::string& name_or_json_path) {
  return load_model_spec(name_or_json_path);
}

namespace {
void keep_first(Dataset& d, int n) {
  if (n >= d.count) return;
  d.count = n;
  d.images.resize(size_t(n) * d.height * d.width);
  d.labels.resize(size_t(n));
}
}  // namespace

DatasetPair load_mnist(const std::string& dir, int limit, int classes) {
  PCNN_CHECK(limit >= 0, "load_mnist: limit must be 0 (all) or more, got " << limit);
  DatasetPair p = load_mnist_folder(dir, classes);
  if (limit > 0) {
    keep_first(p.train, limit);
    keep_first(p.test, limit);
  }
  return p;
}

Dataset read_images(const std::string& idx_path) {
  IdxArray a = read_idx(idx_path);
  PCNN_CHECK(a.dims.size() == 3, "'" << idx_path << "' is not an image file (rank "
                                     << a.dims.size() << ", expected 3)");
  Dataset d;
  d.count = a.dims[0];
  d.height = a.dims[1];
  d.width = a.dims[2];
  d.images = std::move(a.data);
  d.images_file = idx_path;
  return d;
}

}  // namespace pcnn::api
