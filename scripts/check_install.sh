#!/usr/bin/env bash
# Checks the installed library as another project sees it: installs a build into a temporary
# prefix, configures and builds examples/ against it (find_package(pcnn), pcnn::pcnn), and runs
# each example briefly on the first images of an MNIST-format folder: train (saves a model),
# define_network, predict (reads that model); the installed `pcnn eval` reads it too.
#   scripts/check_install.sh [BUILD_DIR [DATA_DIR]]   (defaults: build, Fashion-MNIST)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
data_dir=${2:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  echo "check_install: no configured build in '$build_dir' (run scripts/setup.sh)" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pcnn-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { echo "--- check_install: $*"; }
# expect FILE TEXT: the output of the step before holds TEXT, or the check fails.
expect() {
  grep -q -- "$2" "$1" || { echo "check_install: expected '$2' in the output above" >&2; exit 1; }
}

step "build and install $build_dir into $prefix"
cmake --build "$build_dir" -j "$(nproc)" --target pcnn_cli
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
for f in bin/pcnn include/pcnn/pcnn.hpp include/pcnn/api/pcnn.hpp include/pcnn/core/check.hpp \
         lib/cmake/pcnn/pcnnConfig.cmake lib/cmake/pcnn/pcnnConfigVersion.cmake lib/libpcnn.a \
         share/pcnn/models/lenet5.json share/doc/pcnn/model-format.md; do
  [ -e "$prefix/$f" ] || { echo "check_install: $f was not installed" >&2; exit 1; }
done
# The installed model file is the built-in model: the same network, the same table.
cmp <("$prefix/bin/pcnn" show "$prefix/share/pcnn/models/lenet5.json") <("$prefix/bin/pcnn" show lenet5) ||
  { echo "check_install: share/pcnn/models/lenet5.json is not the built-in lenet5" >&2; exit 1; }

step "configure and build examples/ against the installed package"
cmake -S examples -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/examples" -j "$(nproc)"

bin=$work/examples
out=$work/out.txt
cd "$work"
step "train (LeNet-5, 1 epoch, first 512 images)"
"$bin/train/train" "$data_dir" --epochs 1 --limit 512 --save "$work/lenet5.pcnn" | tee "$out"
expect "$out" "^epoch 1/1 .*test_acc"
expect "$out" "^saved "

step "define_network (a network built in code, first 512 images)"
"$bin/define_network/define_network" "$data_dir" 512 | tee "$out"
expect "$out" "^small_cnn: "
expect "$out" "^test accuracy "

step "predict (the model train saved, the test images)"
"$bin/predict/predict" "$work/lenet5.pcnn" "$data_dir/t10k-images-idx3-ubyte.gz" 5 | tee "$out"
expect "$out" "10000 images of 28x28"
expect "$out" "^image 4: class [0-9] "

step "the installed pcnn reads the example's model"
"$prefix/bin/pcnn" eval --load "$work/lenet5.pcnn" --data "$data_dir" --limit 512 | tee "$out"
expect "$out" "test accuracy"
echo "check_install: ok"
