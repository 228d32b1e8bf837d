// pcnn train's augmentation options: --augment LIST (elastic, affine, crop, flip) and the
// magnitudes of each method, checked strictly (a magnitude needs its method in the list), turned
// into the trainer's AugmentConfig, written as text for the recipe, and compared on --resume.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "apps/pcnn/resume.hpp"
#include "core/augment_config.hpp"

namespace pcnn::cli {

struct AugmentOptions {
  std::vector<std::string> methods;
  AugmentConfig magnitudes;  // the flags unused: methods says which apply
};

void add_augment_options(CLI::App& app, AugmentOptions& o);
// Throws CLI::ValidationError: a method given twice, a magnitude without its method.
AugmentConfig augment_config(const AugmentOptions& o, const CLI::App& app);
// The methods in canonical order, comma-separated ("elastic,affine"; "" for none).
std::string augment_methods(const AugmentConfig& a);
// For the recipe and the header: "elastic (alpha 12, sigma 4), flip"; "" for none.
std::string augment_text(const AugmentConfig& a);
// --resume: each augmentation option given must repeat the checkpoint's value.
void check_same_augment(const ResumeCheck& check, const AugmentOptions& given,
                        const AugmentConfig& saved);

}  // namespace pcnn::cli
