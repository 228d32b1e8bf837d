// What a library user picks from: the backends compiled in, model specs by name or file, and
// image files for predict().
#include "api/pcnn.hpp"
#include "backends/registry.hpp"
#include "data/data_source.hpp"
#include "data/idx.hpp"
#include "data/image_file.hpp"
#include "data/subset.hpp"

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

DatasetPair load_data(const std::string& dir, const ModelSpec& spec, const std::string& format,
                      int limit) {
  PCNN_CHECK(limit >= 0, "load_data: limit must be 0 (all) or more, got " << limit);
  DatasetPair p =
      load_dataset(dir, parse_data_format(format), {spec.in_c, spec.in_h, spec.in_w}, 256);
  p.check_classes(spec.classes, spec.name);
  p.check_labels(spec.classes);
  if (limit > 0) {
    keep_first(p.train, limit);
    keep_first(p.test, limit);
  }
  return p;
}

Dataset read_image_files(const std::vector<std::string>& paths, int channels, int height,
                         int width) {
  PCNN_CHECK(!paths.empty(), "read_image_files: no files given");
  Dataset d;
  d.channels = channels;
  d.height = height;
  d.width = width;
  for (const std::string& p : paths) {
    const Image im = convert_image(read_image(p), channels, height, width);
    d.images.insert(d.images.end(), im.pixels.begin(), im.pixels.end());
    ++d.count;
  }
  d.images_file = paths.front();
  return d;
}

}  // namespace pcnn::api
