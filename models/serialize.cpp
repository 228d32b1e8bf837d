// Model file format (little-endian): "PCNNMODEL1\n", a JSON header line {"spec", "mean",
// "inv_std", "param_count"}, then param_count float32 values, nothing after.
#include "models/serialize.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "models/model.hpp"

namespace pcnn {

namespace {
const std::string kMagic = "PCNNMODEL1\n";
}

void save_model(const std::string& path, const SavedModel& m) {
  const nlohmann::json header = {{"spec", to_json(m.spec)},
                                 {"mean", m.mean},
                                 {"inv_std", m.inv_std},
                                 {"param_count", m.params.size()}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    PCNN_CHECK(out, "cannot write '" << tmp << "'");
    out << kMagic << header.dump() << "\n";
    out.write(reinterpret_cast<const char*>(m.params.data()),
              std::streamsize(m.params.size() * sizeof(float)));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error("writing '" + tmp + "' failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot move the saved model to '" + path + "'");
  }
}

SavedModel load_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  PCNN_CHECK(in, "cannot open model file '" << path << "'");
  std::string magic(kMagic.size(), '\0');
  in.read(&magic[0], std::streamsize(magic.size()));
  PCNN_CHECK(in && magic == kMagic, "'" << path << "' is not a ParallelCNN model file");
  std::string line;
  PCNN_CHECK(std::getline(in, line), "'" << path << "' is truncated in its header");
  SavedModel m;
  size_t count = 0;
  try {
    const nlohmann::json h = nlohmann::json::parse(line);
    m.spec = model_spec_from_json(h.at("spec"));
    m.mean = h.at("mean").get<float>();
    m.inv_std = h.at("inv_std").get<float>();
    count = h.at("param_count").get<size_t>();
  } catch (const nlohmann::json::exception& e) {
    throw Error("'" + path + "' has a corrupt header: " + e.what());
  }
  std::vector<char> rest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  PCNN_CHECK(rest.size() == count * sizeof(float),
             "'" << path << "' holds " << rest.size() << " bytes of parameters, its header says "
                 << count * sizeof(float) << " (truncated or corrupt file)");
  const size_t expected = initial_params(m.spec, 0).size();
  PCNN_CHECK(count == expected, "'" << path << "' has " << count << " parameters but its model '"
                                    << m.spec.name << "' needs " << expected);
  m.params.resize(count);
  std::copy(rest.begin(), rest.end(), reinterpret_cast<char*>(m.params.data()));
  return m;
}

}  // namespace pcnn
