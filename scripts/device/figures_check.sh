#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root: the issue's figures for the tree as it is,
# in one call of about 170 s on an H100 (the build about 140 s of it). The step lab on $MODELS at
# $STEP_BATCHES in fp32 and bf16, twice; cuda and cudnn in the same run; `--recipe fast` on
# seeds 1-10 with its --timings table, where Fashion-MNIST was carried. Needs
# scripts/device/bundle.sh's include/ and lib/ carried, and .deps/device/fashion-mnist, e.g.
#   carry [".deps/device/include", ".deps/device/lib", ".deps/device/fashion-mnist"]
# Hands back results.tgz and summary.log.
# Usage: [MODELS=a,b] [STEP_BATCHES=64,256] scripts/device/figures_check.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
b=/tmp/build-figures
lab_session /tmp/pcnn-figures $b pcnn pcnn_step_lab
# the step lab under the default settings (a variable no run reads, for step_lab_checks' loop)
step_lab_checks $b PCNN_FIGURES_CHECK "default" "${MODELS:-lenet5,simard2003,fast3x3}"
recipe_fast_runs $b "1 2 3 4 5 6 7 8 9 10"
log done
