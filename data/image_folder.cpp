// Class folders listed with opendir (sorted, so a data set loads the same everywhere), then every
// image read, converted and appended in the interleaved class order.
#include "data/image_folder.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/check.hpp"
#include "core/checked_math.hpp"
#include "data/image_file.hpp"

namespace pcnn {

namespace {
bool is_dir(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The entries of a folder, sorted, without "." , ".." and hidden names.
std::vector<std::string> entries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  PCNN_CHECK(d, "cannot open folder '" << dir << "'");
  std::vector<std::string> names;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

bool looks_like_image_folder(const std::string& dir) {
  return is_dir(dir + "/train") && is_dir(dir + "/test");
}

Dataset load_image_classes(const std::string& dir, const ImageShape& shape,
                           std::vector<std::string> class_names) {
  PCNN_CHECK(is_dir(dir), "image folder '" << dir << "' is missing");
  std::vector<std::string> found;
  for (const std::string& name : entries(dir)) {
    const std::string p = dir + "/" + name;
    PCNN_CHECK(is_dir(p), "'" << p << "' is not a class folder (a data set folder holds one "
                                     "sub-folder of images per class)");
    found.push_back(name);
  }
  PCNN_CHECK(!found.empty(), "image folder '" << dir << "' has no class sub-folders");
  if (class_names.empty()) class_names = found;
  for (size_t k = 0; k < std::max(found.size(), class_names.size()); ++k) {
    const bool extra = k < found.size() &&
                       std::find(class_names.begin(), class_names.end(), found[k]) == class_names.end();
    PCNN_CHECK(!extra, "'" << dir << "' has class folder '" << found[k]
                           << "', which the training set does not have");
    const bool missing = k < class_names.size() &&
                         std::find(found.begin(), found.end(), class_names[k]) == found.end();
    PCNN_CHECK(!missing, "'" << dir << "' has no class folder '" << class_names[k]
                             << "', which the training set has");
  }
  PCNN_CHECK(class_names.size() <= 65536, "'" << dir << "' has " << class_names.size()
                                              << " class folders (at most 65536)");
  // Every file of every class, checked by name before any is decoded.
  std::vector<std::vector<std::string>> files(class_names.size());
  size_t total = 0, longest = 0;
  for (size_t k = 0; k < class_names.size(); ++k) {
    const std::string cdir = dir + "/" + class_names[k];
    for (const std::string& name : entries(cdir)) {
      const std::string p = cdir + "/" + name;
      PCNN_CHECK(has_image_extension(name),
                 "'" << p << "' is not an image (a class folder holds .png, .jpg or .jpeg files)");
      files[k].push_back(p);
    }
    PCNN_CHECK(!files[k].empty(), "class folder '" << cdir << "' has no images");
    total += files[k].size();
    longest = std::max(longest, files[k].size());
  }
  const uint64_t bytes = uint64_t(total) * shape.channels * shape.height * shape.width;
  PCNN_CHECK(total <= kMaxElements && bytes <= (uint64_t(1) << 34),
             "'" << dir << "' has " << total << " images, " << (bytes >> 20)
                 << " MiB at the model's input size: too many");
  Dataset d;
  d.channels = shape.channels;
  d.height = shape.height;
  d.width = shape.width;
  d.classes = int(class_names.size());
  d.class_names = class_names;
  d.images_file = d.labels_file = dir;
  d.images.reserve(size_t(bytes));
  for (size_t i = 0; i < longest; ++i)
    for (size_t k = 0; k < files.size(); ++k) {
      if (i >= files[k].size()) continue;
      const Image im =
          convert_image(read_image(files[k][i]), shape.channels, shape.height, shape.width);
      d.images.insert(d.images.end(), im.pixels.begin(), im.pixels.end());
      d.labels.push_back(int32_t(k));
      ++d.count;
    }
  return d;
}

DatasetPair load_image_folder(const std::string& dir, const ImageShape& shape) {
  DatasetPair p;
  p.source = dir;
  p.train = load_image_classes(dir + "/train", shape);
  p.test = load_image_classes(dir + "/test", shape, p.train.class_names);
  p.classes = p.train.classes;
  p.train.source = p.test.source = dir;
  return p;
}

}  // namespace pcnn
