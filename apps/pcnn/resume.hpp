// `pcnn train --resume FILE`: the checkpoint defines the run, so an option given beside it may
// only repeat the checkpoint's value; another value would make another run and is refused with
// one line (a usage error naming the option). The data set must be the one trained on.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "data/dataset.hpp"
#include "models/checkpoint.hpp"

namespace pcnn::cli {

class ResumeCheck {
 public:
  ResumeCheck(const CLI::App& train, const std::string& checkpoint_path)
      : train_(train), path_(checkpoint_path) {}
  // Throws CLI::ValidationError when option was given and its value differs from saved.
  void same(const std::string& option, int given, int saved) const;
  void same(const std::string& option, uint32_t given, uint32_t saved) const;
  void same(const std::string& option, float given, float saved) const;
  void same(const std::string& option, const std::string& given, const std::string& saved) const;
  // --model: the spec it names against the checkpoint's.
  void same_model(const std::string& given, const ModelSpec& saved) const;

 private:
  void refuse_if(bool differs, const std::string& option, const std::string& given,
                 const std::string& saved) const;
  const CLI::App& train_;
  std::string path_;
};

// Throws Error when the data loaded differ from those the checkpoint was trained on.
void check_same_data(const Checkpoint& c, const Provenance& source, const std::string& folder,
                     const std::string& path);

}  // namespace pcnn::cli
