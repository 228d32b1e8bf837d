#!/usr/bin/env bash
# pcnn show: the same table for a built-in name, its JSON file and a model file saved from it;
# LeNet-5's totals (worked out by hand in tests/test_model_costs.cpp); the example output in
# docs/model-format.md as pcnn prints it; bad files and names refused in one line naming the
# file, the layer index and the key.
# Usage: cli_show.sh PATH/TO/pcnn SOURCE_DIR
set -u
pcnn=$1
src=$2
source "$(dirname "$0")/cli_expect.sh"
source "$(dirname "$0")/cli_data.sh"

show() {  # show FILE args...: pcnn show's stdout into FILE; fails the check if pcnn fails
  local out=$1; shift
  timeout 60 "$pcnn" show "$@" >"$out" 2>"$tmp/err" || {
    echo "FAIL: pcnn show $* -> $(cat "$tmp/err")"; failures=$((failures + 1)); }
}

same() {  # same WHAT FILE FILE
  if cmp -s "$2" "$3"; then echo "ok: $1"; else
    echo "FAIL: $1 differ:"; diff "$2" "$3"; failures=$((failures + 1)); fi
}

contains() {  # contains FILE "words"
  if grep -qF -- "$2" "$1"; then echo "ok: '$2'"; else
    echo "FAIL: no '$2' in:"; cat "$1"; failures=$((failures + 1)); fi
}

# LeNet-5: the totals and a batch's.
show "$tmp/lenet5" lenet5 --batch-size 64
contains "$tmp/lenet5" "model lenet5: 1x28x28 input, 10 classes, 61,706 parameters"
# conv1's activation bytes: its output 4 * 6*14*14 = 4,704 and one argmax byte per output, 1,176.
contains "$tmp/lenet5" "  0-2    conv 5x5 x6 pad 2 +relu +maxpool 2  6x14x14         156      235,200                   5,880"
contains "$tmp/lenet5" "         output gradients (2 buffers)                                                           9,408"
contains "$tmp/lenet5" "         workspace (transient)                                                                 18,816"
contains "$tmp/lenet5" "         total                                            61,706      833,040                  36,960"
contains "$tmp/lenet5" "per image: 833,040 FLOPs forward, 2,499,120 forward and backward; 36,960 bytes of activations"
contains "$tmp/lenet5" "batch of 64: 53,314,560 FLOPs forward, 159,943,680 forward and backward"
contains "$tmp/lenet5" "batch of 64: 2,365,440 bytes of activations (2.3 MiB), 493,648 bytes of parameters and their gradients"

# In bf16: conv1's output in 2 bytes (2,352) beside its argmax bytes, the gradient buffers
# halved, and the transient conversions (logits and their gradient 80, the fp32 copies of
# conv1's input and output twice, 15,680; no rounded input: conv1 reads it in fp32).
show "$tmp/lenet5_bf16" lenet5 --precision bf16
contains "$tmp/lenet5_bf16" "  0-2    conv 5x5 x6 pad 2 +relu +maxpool 2  6x14x14         156      235,200                   3,528"
contains "$tmp/lenet5_bf16" "         output gradients (2 buffers)                                                           4,704"
contains "$tmp/lenet5_bf16" "         16-bit conversions (transient)                                                        15,760"
contains "$tmp/lenet5_bf16" "44,436 bytes of activations (bf16)"

# A built-in name and its file: one description, one table.
for m in lenet5 simard2003 mlp; do
  show "$tmp/by_name" "$m"
  show "$tmp/by_file" "$src/models/builtin/$m.json"
  same "pcnn show $m and models/builtin/$m.json" "$tmp/by_name" "$tmp/by_file"
done

# A model file holds its spec: the table of the model it was trained from.
make_data "$tmp/data" 0 1 2 3 4 5 6 7
expect_ok train --backend serial --model mlp --epochs 1 --batch-size 4 --data "$tmp/data" --save "$tmp/m.pcnn"
show "$tmp/by_file" "$tmp/m.pcnn"
show "$tmp/by_name" mlp
same "pcnn show m.pcnn (trained from mlp) and mlp" "$tmp/by_name" "$tmp/by_file"
cp "$tmp/m.pcnn" "$tmp/m.saved"  # any file that is no built-in name and no .json is a model file
show "$tmp/by_file" "$tmp/m.saved"
same "pcnn show m.saved and mlp" "$tmp/by_name" "$tmp/by_file"

# A model with batchnorm layers: shown with its parameters, saved with its running statistics,
# evaluated after loading as it was at the end of training (the final test accuracy).
cat >"$tmp/bn.json" <<'JSON'
{"name": "bn", "input": [1, 28, 28], "classes": 10, "layers": [
  {"type": "conv", "units": 4, "kernel": 5}, {"type": "batchnorm"}, {"type": "relu"},
  {"type": "maxpool", "kernel": 2}, {"type": "dense", "units": 10}]}
JSON
show "$tmp/bn_spec" "$tmp/bn.json"
grep -q "batchnorm x4 +relu  *4x24x24  *8  *18,432  *9,216$" "$tmp/bn_spec" && echo "ok: pcnn show lists the batchnorm, relu fused into it" ||
  { echo "FAIL: no batchnorm row in: $(cat "$tmp/bn_spec")"; failures=$((failures + 1)); }
expect_ok train --backend serial --model "$tmp/bn.json" --epochs 2 --batch-size 4 --data "$tmp/data" --save "$tmp/bn.pcnn"
train_acc=$(sed -n 's/^final test accuracy \([0-9.]*\),.*/\1/p' "$tmp/out")
show "$tmp/bn_file" "$tmp/bn.pcnn"
same "pcnn show bn.pcnn and bn.json" "$tmp/bn_spec" "$tmp/bn_file"
expect_ok eval --backend serial --load "$tmp/bn.pcnn" --data "$tmp/data"
eval_acc=$(sed -n 's/.*test accuracy \([0-9.]*\),.*/\1/p' "$tmp/out")
[ -n "$train_acc" ] && [ "$train_acc" = "$eval_acc" ] && echo "ok: eval after loading: accuracy $eval_acc, as trained" ||
  { echo "FAIL: trained to '$train_acc', evaluated after loading '$eval_acc'"; failures=$((failures + 1)); }

# The example in docs/model-format.md, and the output printed below it.
doc=$src/docs/model-format.md
awk '/^```json$/ && !n {f=1; n=1; next} /^```$/ {f=0} f' "$doc" >"$tmp/example.json"
awk '/^`pcnn show` prints/ {s=1} s && /^```$/ {if (f) exit; f=1; next} f' "$doc" >"$tmp/doc_output"
show "$tmp/example_output" "$tmp/example.json"
same "docs/model-format.md's example output and pcnn show's" "$tmp/doc_output" "$tmp/example_output"

# Bad files and names: one line, exit 1 for a file, 2 for a word that names nothing.
spec() { printf '%s' "$1" >"$tmp/$2"; }
spec '{"input": [1, 6, 6], "layers": [{"type": "relu"}, {"type": "conv", "units": 2, "kernel": 7}]}' kernel.json
expect_error "'$tmp/kernel.json': layer 1 (conv): 'kernel' 7 does not fit its input 6x6" show "$tmp/kernel.json"
spec '{"input": [1, 6, 6], "layers": [{"type": "flatten"}, {"type": "dense", "units": 10, "pool": "maxpool"}]}' key.json
expect_error "layer 1 (dense): unknown key \"pool\" (type, units, act)" show "$tmp/key.json"
spec '{"input": [1, 6, 6], "layers": [{"type": "conv", "kernel": 1}]}' missing.json
expect_error "layer 0 (conv): 'units' is missing" show "$tmp/missing.json"
spec '{"input": [1, 6, 6], "layers": [{"type": "conv", "units": 10, "kernel": 6, "stride": 1.5}]}' real.json
expect_error "layer 0 (conv): 'stride' must be an integer, got 1.5" show "$tmp/real.json"
spec '{"input": [1, 6, 6], "layers": [{"type": "flatten"}, {"type": "softmax"}]}' type.json
expect_error "layer 1: unknown layer type 'softmax'" show "$tmp/type.json"
spec '{"input": [1, 6, 6], "clases": 3, "layers": []}' top.json
expect_error "model spec: unknown key \"clases\"" show "$tmp/top.json"
spec '{"input": [1, 4, 4], "classes": 16, "layers": [{"type": "batchnorm", "momentum": 1.5}, {"type": "flatten"}]}' bn_momentum.json
expect_error "layer 0 (batchnorm): 'momentum' must be between 0 and 1, got 1.5" show "$tmp/bn_momentum.json"
spec '{"input": [1, 4, 4], "classes": 16, "layers": [{"type": "batchnorm", "eps": -1}, {"type": "flatten"}]}' bn_eps.json
expect_error "layer 0 (batchnorm): 'eps' must be greater than 0, got -1" show "$tmp/bn_eps.json"
spec '{"input": [1, 4, 4], "classes": 16, "layers": [{"type": "batchnorm", "units": 4}, {"type": "flatten"}]}' bn_key.json
expect_error "layer 0 (batchnorm): unknown key \"units\" (type, eps, momentum, act)" show "$tmp/bn_key.json"
spec '{"input": [1, 6, ' truncated.json
expect_error "'$tmp/truncated.json' is not valid JSON" show "$tmp/truncated.json"
expect_error "cannot open model spec '$tmp/nothing.json'" show "$tmp/nothing.json"
expect_error "cannot open model file '$tmp/nothing.pcnn'" show "$tmp/nothing.pcnn"
printf 'junk' >"$tmp/junk.pcnn"
expect_error "is not a ParallelCNN model file" show "$tmp/junk.pcnn"
head -c 100 "$tmp/m.pcnn" >"$tmp/cut.pcnn"
expect_error "$tmp/cut.pcnn" show "$tmp/cut.pcnn"
expect_error "is not a regular file" show "$tmp"
expect_usage_error "unknown model 'lenet' (did you mean 'lenet5'?" show lenet
expect_usage_error "model is required" show
expect_usage_error "--batch-size: must be at least 1, got 0" show lenet5 --batch-size 0
"$pcnn" show "$tmp/junk.pcnn" >"$tmp/out" 2>/dev/null
[ ! -s "$tmp/out" ] && echo "ok: nothing on stdout for a bad file" ||
  { echo "FAIL: a bad file printed: $(cat "$tmp/out")"; failures=$((failures + 1)); }

# Padded pools, dropout and global average pooling: rows with their parameters, FLOPs (one per
# input element) and activation bytes (the output; gradients are shared buffers; dropout keeps no
# mask).
spec '{"name": "regularised", "input": [1, 28, 28], "layers": [
  {"type": "conv", "units": 6, "kernel": 3, "pad": 1, "act": "relu"},
  {"type": "maxpool", "kernel": 3, "stride": 2, "pad": 1},
  {"type": "conv", "units": 8, "kernel": 3, "act": "relu"},
  {"type": "avgpool", "kernel": 2, "pad": 1}, {"type": "dropout", "rate": 0.25},
  {"type": "globalavgpool"}, {"type": "flatten"}, {"type": "dense", "units": 10}]}' regularised.json
show "$tmp/regularised" "$tmp/regularised.json"
contains "$tmp/regularised" "  1      maxpool 3 stride 2 pad 1      6x14x14           0        4,704                   4,704"
contains "$tmp/regularised" "  3      avgpool 2 stride 2 pad 1      8x7x7             0        1,152                   1,568"
contains "$tmp/regularised" "  4      dropout 0.25                  8x7x7             0          392                   1,568"
contains "$tmp/regularised" "  5      globalavgpool                 8                 0          392                      32"
spec '{"input": [1, 6, 6], "layers": [{"type": "maxpool", "kernel": 2, "pad": 2}, {"type": "flatten"}, {"type": "dense", "units": 10}]}' pad.json
expect_error "layer 0 (maxpool): 'pad' 2 must be less than 'kernel' 2" show "$tmp/pad.json"
spec '{"input": [1, 6, 6], "layers": [{"type": "dropout", "rate": 1.0}, {"type": "flatten"}, {"type": "dense", "units": 10}]}' rate.json
expect_error "layer 0 (dropout): 'rate' must be at least 0 and below 1, got 1" show "$tmp/rate.json"

finish "pcnn show"
