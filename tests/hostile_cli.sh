#!/usr/bin/env bash
# Issue 16's hostile inputs through the pcnn program: option values out of range or beyond their
# type, bad model specs, IDX files that lie, gzip bombs, labels outside the model's classes,
# corrupt / cut / old / foreign model files. Each must exit non-zero with one line on stderr (no
# stack trace, no signal) and train nothing; a bad option value is a usage error (exit 2). Also:
# the partial-batch warning, a 26-class model through the CLI, a model with a stride-1 max-pool
# saves and loads again, a saved file reads from plain Python, and gradients that overflow
# (--lr 1e30) under --on-nan stop and skip.
# Usage: hostile_cli.sh PATH/TO/pcnn
set -u
pcnn=$1
source "$(dirname "$0")/cli_expect.sh"
source "$(dirname "$0")/cli_data.sh"

# 16 random 28x28 images, labels 0..9 then 0..5.
make_data "$tmp/data" 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
make_data "$tmp/data5" 0 1 2 3 4 0 1 2 3 4 0 1 2 3 4 0
run=(--backend serial --epochs 1 --batch-size 4)

# --- option values, refused while parsing (exit 2); every case would train if it slipped by ---
bad() { expect_usage_error "$@"; }
t=(train "${run[@]}" --data "$tmp/data")
for v in nan inf -inf 0 -1 -0 1e-50; do bad "--lr: must be" "${t[@]}" --lr "$v"; done
bad "--lr: must be a finite number, got 1e39 (inf as a float)" "${t[@]}" --lr 1e39
bad "--lr: must be above 0, got 1e-50 (0 as a float)" "${t[@]}" --lr 1e-50
bad "--lr: must be a finite number, got nan" "${t[@]}" --lr nan
bad "--lr takes FLOAT" "${t[@]}" --lr fast
for v in nan inf 0 -0.5 1e39; do bad "--lr-decay: must be" "${t[@]}" --lr-decay "$v"; done
bad "--momentum: must be below 1, got 1" "${t[@]}" --optimizer sgd --momentum 1
bad "--momentum: must be below 1, got 0.99999999999 (1 as a float)" "${t[@]}" --momentum 0.99999999999
bad "--momentum: must be at least 0, got -0.1" "${t[@]}" --momentum -0.1
bad "--momentum: must be a finite number, got nan" "${t[@]}" --momentum nan
for v in -1 inf nan 1e39; do bad "--weight-decay: must be" "${t[@]}" --weight-decay "$v"; done
bad "--epochs: must be at least 1, got 0" "${t[@]}" --epochs 0
bad "--epochs: must be at least 1, got +0" "${t[@]}" --epochs +0
bad "--epochs: must be at least 1, got 0x0" "${t[@]}" --epochs 0x0
bad "--epochs: must be at least 1, got -0" "${t[@]}" --epochs -0
bad "--epochs: must be at most 100000, got 100001" "${t[@]}" --epochs 100001
bad "--epochs: must be at most 100000, got 99999999999999999999" "${t[@]}" --epochs 99999999999999999999
bad "--epochs: must be a whole number, got 2.5" "${t[@]}" --epochs 2.5
bad "--epochs: must be a whole number, got nan" "${t[@]}" --epochs nan
bad "--epochs: must be written without a leading 0" "${t[@]}" --epochs 010
bad "--batch-size: must be at least 1, got -4" "${t[@]}" --batch-size -4
bad "--batch-size: must be at most 65536, got 65537" "${t[@]}" --batch-size 65537
bad "--batch-size: must be at most 65536, got 4294967300" "${t[@]}" --batch-size 4294967300
bad "--batch-size: 17 is more than the 16 training images in $tmp/data" "${t[@]}" --batch-size 17
bad "--threads: must be at most 1024, got 100000" "${t[@]}" --threads 100000
bad "--threads: must be at most 1024, got 5000" "${t[@]}" --threads 5000
bad "--threads: must be at least 0, got -1" "${t[@]}" --threads -1
bad "--limit: must be at least 1, got 0" "${t[@]}" --limit 0
bad "--limit: must be at most 1000000000, got 1000000001" "${t[@]}" --limit 1000000001
bad "--gpus: must be at least 1, got 0" "${t[@]}" --gpus 0
bad "--gpus: must be at most 64, got 65" "${t[@]}" --gpus 65
bad "--log-every: must be at least 1, got 0" "${t[@]}" --log-every 0
bad "--progress-every: must be at most 1000000000, got 4294967297" "${t[@]}" --progress-every 4294967297
bad "--seed: must be at least 0, got -1" "${t[@]}" --seed -1
bad "--seed: must be at most 4294967295, got 4294967296" "${t[@]}" --seed 4294967296
bad "--data: must not be empty" train "${run[@]}" --data ""
bad "--save: must not be empty" "${t[@]}" --save ""
bad "--limit: must be at least 1, got 0" eval --load "$tmp/x.pcnn" --data "$tmp/data" --limit 0
bad "--threads: must be at most 1024, got 100000" eval --load "$tmp/x.pcnn" --threads 100000
bad "--batch-size: must be at most 65536, got 70000" eval --load "$tmp/x.pcnn" --batch-size 70000
bad "--threads: must be at most 1024, got 2000" bench --backends serial --threads 1,2000
bad "--batch-size: must be at most 65536, got 70000" bench --backends serial --batch-sizes 8,70000
bad "--repeat: must be at least 1, got 0" bench --backends serial --repeat 0
bad "--warmup: must be at most 10000, got 1000000" bench --backends serial --warmup 1000000
for v in 0 nan inf 1e400 -1 3601; do bad "--budget: must be" bench --backends serial --budget "$v"; done
bad "--images: must be at most 1000000, got 1000000000" bench --backends serial --images 1000000000
bad "--seed: must be at least 0, got -1" bench --backends serial --seed -1
bad "--threads: must be at most 1024, got 100000" backends --threads 100000
bad "--out: must not be empty" plot --log "$tmp/x.csv" --out ""

# --- a partial last batch: dropped, and said once (16 images, batch 5: 1 left out) ---
expect_ok "${t[@]}" --batch-size 5
if [ "$(grep -c . "$tmp/err")" -ne 1 ] || ! grep -q "warning: the batch size 5 does not divide the 16 training images: each epoch leaves out 1 " "$tmp/err"; then
  echo "FAIL: partial-batch warning: $(cat "$tmp/err")"; failures=$((failures + 1))
else
  echo "ok: $(cat "$tmp/err")"
fi
expect_ok "${t[@]}" --batch-size 4
[ ! -s "$tmp/err" ] || { echo "FAIL: a warning with a batch that divides: $(cat "$tmp/err")"; failures=$((failures + 1)); }

# --- model specs (each names the layer and the key) ---
spec() {  # spec NAME LAYERS [INPUT] [CLASSES]: a spec file ending in flatten + dense
  printf '{"name": "%s", "input": %s, "classes": %s, "layers": [%s, {"type": "flatten"}, {"type": "dense", "units": %s}]}\n' \
    "$1" "${3:-[1, 28, 28]}" "${4:-10}" "$2" "${4:-10}" >"$tmp/$1.json"
  echo "$tmp/$1.json"
}
conv='{"type": "conv", "units": 2, "kernel": 3'
expect_error "layer 1 (maxpool): 'stride' must be at least 1, got 0" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec pool_stride0 "$conv}, {\"type\": \"maxpool\", \"kernel\": 2, \"stride\": 0}")"
expect_error "layer 0 (conv): 'pool_window' must be at least 1, got 0" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec fused_window0 "$conv, \"pool\": \"maxpool\", \"pool_window\": 0}")"
expect_error "layer 0 (dense): 'units' 4294967306 is outside the int range" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec units_wrap '{"type": "dense", "units": 4294967306}')"
expect_error "'input' [channels, height, width] must be at least 1 each, got [1, -28, 28]" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec neg_height "$conv}" '[1, -28, 28]')"
expect_error "layer 0 (conv): 'pad' 1000000000 must be less than 'kernel' 3" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec huge_pad "$conv, \"pad\": 1000000000}")"
expect_error "'units' must be an integer, got 1e+300" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec big_float '{"type": "dense", "units": 1e300}')"
expect_error "'kernel' must be an integer, got 2.5" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec half '{"type": "conv", "units": 2, "kernel": 2.5}')"
expect_error 'layer 0 (conv): unknown key "padding"' \
  train "${run[@]}" --data "$tmp/data" --model "$(spec padding "$conv, \"padding\": 1}")"
expect_error 'layer 0 (conv): unknown key "activation"' \
  train "${run[@]}" --data "$tmp/data" --model "$(spec activation "$conv, \"activation\": \"relu\"}")"
expect_error "the input would have 65536x65536x1 elements" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec wrap_size "$conv}" '[65536, 65536, 1]')"
expect_error "'kernel' 31 does not fit its padded input 30x30" \
  train "${run[@]}" --data "$tmp/data" --model "$(spec big_kernel '{"type": "conv", "units": 2, "kernel": 31, "pad": 1}')"

# --- IDX files ---
cp -r "$tmp/data" "$tmp/wrap"
{ printf '\x00\x00\x08\x03'; be32 $((1 << 22)); be32 $((1 << 21)); be32 $((1 << 21)); } >"$tmp/wrap/train-images-idx3-ubyte"
expect_error "announces more than 1024 MiB of data" train "${run[@]}" --data "$tmp/wrap"
cp -r "$tmp/data" "$tmp/bomb"
rm "$tmp/bomb/train-images-idx3-ubyte"
head -c 256M /dev/zero | gzip -1 >"$tmp/bomb/train-images-idx3-ubyte.gz"
expect_error "holds IDX type 0x0" train "${run[@]}" --data "$tmp/bomb"
{ printf '\x00\x00\x08\x03'; be32 16; be32 28; be32 28; head -c 64M /dev/zero; } | gzip -1 >"$tmp/bomb/train-images-idx3-ubyte.gz"
expect_error "holds more data than its header says (12544 bytes)" train "${run[@]}" --data "$tmp/bomb"
cp -r "$tmp/data" "$tmp/cut"
head -c 5000 "$tmp/data/t10k-images-idx3-ubyte" >"$tmp/cut/t10k-images-idx3-ubyte"
expect_error "(truncated file)" train "${run[@]}" --data "$tmp/cut"

# --- labels outside the model's classes ---
five=$(spec five "$conv}" '[1, 28, 28]' 5)
expect_error "has label 5 (item 5), outside the 5 classes 0..4" train "${run[@]}" --data "$tmp/data" --model "$five"
expect_ok train "${run[@]}" --data "$tmp/data5" --model "$five" --save "$tmp/five.pcnn"
expect_error "has label 5 (item 5), outside the 5 classes 0..4" eval --backend serial --load "$tmp/five.pcnn" --data "$tmp/data"

# --- more than 10 classes: a 26-class model trains and evaluates on labels 0..25 ---
make_data "$tmp/data26" $(seq 0 25)
make_data "$tmp/data27" $(seq 0 26)
letters=$(spec letters "$conv}" '[1, 28, 28]' 26)
expect_ok train "${run[@]}" --data "$tmp/data26" --model "$letters" --save "$tmp/letters.pcnn"
grep -q "^epoch  1/1" "$tmp/out" || { echo "FAIL: the 26-class model did not train: $(cat "$tmp/err")"; failures=$((failures + 1)); }
expect_ok eval --backend serial --load "$tmp/letters.pcnn" --data "$tmp/data26"
grep -q "test accuracy" "$tmp/out" || { echo "FAIL: eval of the 26-class model"; failures=$((failures + 1)); }
expect_error "has label 26 (item 26), outside the 26 classes 0..25" train "${run[@]}" --data "$tmp/data27" --model "$letters"
expect_error "has label 26 (item 26), outside the 26 classes 0..25" eval --backend serial --load "$tmp/letters.pcnn" --data "$tmp/data27"

# --- numerical faults: a learning rate of 1e30 makes step 1's update huge and step 2 overflow ---
# (16 images, batch 4: 4 steps). --on-nan stop (the default) ends with one line naming the step
# and the layer, exit 1, the checkpoint written; --on-nan skip trains on and says how many.
nan_run=(train "${run[@]}" --data "$tmp/data" --optimizer sgd --lr 1e30 --progress-every 1)
timeout 120 "$pcnn" "${nan_run[@]}" --checkpoint "$tmp/nan.ckpt" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 1 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ ! -s "$tmp/nan.ckpt" ] ||
   ! grep -q "^pcnn train: error: the gradients are not finite at step 2 (epoch 1, step 2 of 4), first in layer [1-9] (.*) \(weights\|bias\): the update of that step was skipped; try a smaller --lr; checkpoint written to $tmp/nan.ckpt" "$tmp/err" ||
   grep -q "^epoch  1/1  train_loss" "$tmp/out"; then
  echo "FAIL: --lr 1e30 -> exit $rc, stderr: $(head -c 600 "$tmp/err")"; failures=$((failures + 1))
else
  echo "ok: $(cat "$tmp/err")"
fi
expect_ok "${nan_run[@]}" --on-nan skip
if ! grep -q "^epoch  1/1  train_loss .*  3 steps skipped: not finite$" "$tmp/out" ||
   [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
   ! grep -q "^pcnn train: warning: epoch 1: 3 steps skipped (--on-nan skip): the gradients are not finite at step 2 (epoch 1, step 2 of 4), first in layer" "$tmp/err"; then
  echo "FAIL: --on-nan skip: $(cat "$tmp/out" "$tmp/err" | head -c 900)"; failures=$((failures + 1))
else
  echo "ok: $(cat "$tmp/err")"
fi
# The stopped run goes on past its faulty steps: the one before the stop and two more.
expect_ok train --resume "$tmp/nan.ckpt" --on-nan skip
grep -q "^epoch  1/1  train_loss .*  3 steps skipped: not finite$" "$tmp/out" &&
  grep -q "at step 3 (epoch 1, step 3 of 4)" "$tmp/err" ||
  { echo "FAIL: resumed with --on-nan skip: $(cat "$tmp/out" "$tmp/err" | head -c 900)"; failures=$((failures + 1)); }
expect_usage_error "--on-nan" "${t[@]}" --on-nan ignore

# --- model files: a stride-1 max-pool round trip, then corrupt, cut, old and foreign files ---
stride1=$(spec stride1 "$conv, \"pad\": 1}, {\"type\": \"relu\"}, {\"type\": \"maxpool\", \"kernel\": 2, \"stride\": 1}")
expect_ok train "${run[@]}" --data "$tmp/data" --model "$stride1" --save "$tmp/m.pcnn"
expect_ok eval --backend serial --load "$tmp/m.pcnn" --data "$tmp/data"
grep -q "test accuracy" "$tmp/out" || { echo "FAIL: eval of the stride-1 max-pool model"; failures=$((failures + 1)); }
[ ! -e "$tmp/m.pcnn.tmp" ] || { echo "FAIL: m.pcnn.tmp left behind"; failures=$((failures + 1)); }
size=$(stat -c %s "$tmp/m.pcnn")
for at in 3 20 200 $((size / 2)) $((size - 1)); do
  cp "$tmp/m.pcnn" "$tmp/bad.pcnn"
  # XOR, not a fixed byte: a byte that already held it would leave the file intact.
  byte=$(od -An -tu1 -j "$at" -N 1 "$tmp/bad.pcnn" | tr -d ' ')
  printf "\\$(printf %03o $((byte ^ 0x5a)))" | dd of="$tmp/bad.pcnn" bs=1 seek="$at" conv=notrunc status=none
  expect_error "'$tmp/bad.pcnn'" eval --backend serial --load "$tmp/bad.pcnn" --data "$tmp/data"
done
head -c $((size - 100)) "$tmp/m.pcnn" >"$tmp/cut.pcnn"
expect_error "is truncated" eval --backend serial --load "$tmp/cut.pcnn" --data "$tmp/data"
printf 'PCNNMODEL1\n{"spec": {}}\n' >"$tmp/old.pcnn"
expect_error "is a format-1 ParallelCNN model file" eval --backend serial --load "$tmp/old.pcnn" --data "$tmp/data"
expect_error "is not a ParallelCNN model file" eval --backend serial --load "$tmp/data/train-labels-idx1-ubyte" --data "$tmp/data"

# The file is safetensors: the standard library alone reads its header and tensors.
if command -v python3 >/dev/null; then
  python3 - "$tmp/m.pcnn" <<'PY' || { echo "FAIL: python could not read the model file"; failures=$((failures + 1)); }
import array, json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
header = json.loads(b[8:8 + n])
meta = header.pop("__metadata__")
assert meta["format"] == "pcnn-model" and json.loads(meta["spec"])["layers"][2]["stride"] == 1
for name, t in header.items():
    a = array.array("f")
    a.frombytes(b[8 + n + t["data_offsets"][0]:8 + n + t["data_offsets"][1]])
    count = 1
    for d in t["shape"]:
        count *= d
    assert t["dtype"] == "F32" and len(a) == count, name
print("ok: python reads", len(header), "tensors")
PY
fi

finish "hostile-input CLI"
