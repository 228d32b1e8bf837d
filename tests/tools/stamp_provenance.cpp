// Test helper: writes a copy of a model file whose provenance describes a data folder, built
// through the library API (load_model, data_provenance, save_model), so that pcnn eval's
// warning can be tested whatever pcnn train --save records. A folder of "-" writes the copy with
// no provenance at all.
// Usage: stamp_provenance IN.pcnn DATA_DIR|- OUT.pcnn
#include <cstdio>
#include <exception>

#include "data/dataset.hpp"
#include "models/provenance.hpp"
#include "models/serialize.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: stamp_provenance IN.pcnn DATA_DIR|- OUT.pcnn\n");
    return 2;
  }
  try {
    pcnn::SavedModel m = pcnn::load_model(argv[1]);
    const std::string dir = argv[2];
    m.provenance = dir == "-" ? pcnn::Provenance{}
                              : pcnn::data_provenance(pcnn::load_mnist_folder(dir, 256));
    m.provenance.recipe = dir == "-" ? "" : "written by tests/tools/stamp_provenance";
    pcnn::save_model(argv[3], m);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stamp_provenance: %s\n", e.what());
    return 1;
  }
  return 0;
}
