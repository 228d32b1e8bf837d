// A folder of images, one sub-folder per class: DIR/train/<class>/*.png|*.jpg|*.jpeg and
// DIR/test/<class>/... The classes are the train sub-folders' names in sorted (byte) order,
// label 0 the first; test must have the same class folders. Every image is converted to the
// shape asked for (data/image_file.hpp): the model's input channels, height and width.
#pragma once

#include <string>

#include "data/dataset.hpp"

namespace pcnn {

// The shape every image of a folder data set is converted to.
struct ImageShape {
  int channels = 1, height = 28, width = 28;
};

// Images are taken class by class in turns (the first image of every class, then the second
// ...; within a class in sorted file-name order), so that the first N images of a set (--limit)
// hold every class. Hidden files (names starting with '.') are skipped; any other file that is
// not a readable PNG or JPEG image is an Error naming it.
DatasetPair load_image_folder(const std::string& dir, const ImageShape& shape);

// Reads one class folder set (DIR/train or DIR/test) with the given class names (labels in
// that order); an empty class_names takes the sub-folders found.
Dataset load_image_classes(const std::string& dir, const ImageShape& shape,
                           std::vector<std::string> class_names = {});

// true when dir has train/ and test/ sub-folders (format detection).
bool looks_like_image_folder(const std::string& dir);

}  // namespace pcnn
