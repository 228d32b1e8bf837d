#!/usr/bin/env bash
# Data beyond MNIST through the program: a generated learnable colour data set in CIFAR-10,
# CIFAR-100 and image-folder form trains above chance (format detected, or named), with
# --val-split and --limit; eval and predict (on PNG/JPEG files) read the same data; hostile and
# mismatched data give one line and a non-zero exit.
# Usage: cli_data_formats.sh PATH/TO/pcnn PATH/TO/pcnn_make_data_sets
set -u
pcnn=$1
make=$2
source "$(dirname "$0")/cli_expect.sh"
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A small colour network for 3x32x32 inputs.
cat >"$tmp/rgb.json" <<'JSON'
{"name": "rgb-small", "input": [3, 32, 32], "classes": 10, "layers": [
  {"type": "conv", "units": 8, "kernel": 5, "stride": 2, "act": "relu", "pool": "maxpool"},
  {"type": "dense", "units": 10}]}
JSON
"$make" cifar10 "$tmp/c10" 400 100 || fail "make_data_sets cifar10"
"$make" cifar100 "$tmp/c100" 400 100 || fail "make_data_sets cifar100"
"$make" folder "$tmp/img" 200 60 || fail "make_data_sets folder"

# accuracy_above WANT: the final test accuracy in $tmp/out is above WANT (chance is 0.1).
accuracy_above() {
  local acc; acc=$(sed -n 's/^final test accuracy \([0-9.]*\),.*/\1/p' "$tmp/out")
  if [ -n "$acc" ] && awk -v a="$acc" -v w="$1" 'BEGIN { exit !(a > w) }'; then
    ok "$2: test accuracy $acc > $1"
  else
    fail "$2: test accuracy '$acc' (want > $1): $(tail -3 "$tmp/out")"
  fi
}

# CIFAR-10, detected; the loss falls from epoch 1 to the last.
expect_ok train --backend openmp --threads 2 --model "$tmp/rgb.json" --data "$tmp/c10" --epochs 4 \
  --batch-size 20 --lr 0.005 --save "$tmp/c10.pcnn" --log "$tmp/c10.csv"
accuracy_above 0.5 "cifar10 detected"
first=$(awk -F, 'NR == 2 { print $2 }' "$tmp/c10.csv"); last=$(awk -F, 'END { print $2 }' "$tmp/c10.csv")
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' && ok "cifar10 loss falls $first -> $last" ||
  fail "cifar10 loss $first -> $last"
expect_ok eval --backend serial --load "$tmp/c10.pcnn" --data "$tmp/c10" --data-format cifar10
grep -q "(100 test images)" "$tmp/out" && ok "eval reads cifar10" || fail "eval: $(cat "$tmp/out")"

# CIFAR-100 named, the serial backend; labels 0..9 of the 100 classes with a 100-class model.
sed 's/"classes": 10/"classes": 100/; s/"units": 10}/"units": 100}/' "$tmp/rgb.json" >"$tmp/rgb100.json"
expect_ok train --backend serial --model "$tmp/rgb100.json" --data "$tmp/c100" --data-format cifar100 \
  --epochs 3 --batch-size 20 --lr 0.005
accuracy_above 0.3 "cifar100"

# A folder of PNG images (grey and colour, two sizes) and one JPEG, with a validation split.
expect_ok train --backend openmp --threads 2 --model "$tmp/rgb.json" --data "$tmp/img" --epochs 5 \
  --batch-size 10 --lr 0.005 --val-split 0.2 --save "$tmp/img.pcnn" --log "$tmp/img.csv"
accuracy_above 0.4 "image folder"
grep -q "(160 train / 40 validation / 60 test images)" "$tmp/out" &&
  ok "--val-split 0.2 holds out 40 of 200" || fail "--val-split: $(head -1 "$tmp/out")"
grep -q "val_loss [0-9.]*  val_acc [0-9.]*" "$tmp/out" && ok "epoch lines show validation" ||
  fail "no validation on the epoch line: $(grep '^epoch' "$tmp/out" | head -1)"
head -1 "$tmp/img.csv" | grep -q ',step,val_loss,val_accuracy$' && ok "the log has val columns" ||
  fail "log header: $(head -1 "$tmp/img.csv")"
[ "$(awk -F, 'END { print ($10 != "" && $11 != "") }' "$tmp/img.csv")" = 1 ] &&
  ok "the log's epoch rows hold validation figures" || fail "log rows: $(tail -1 "$tmp/img.csv")"

# predict on image files: class names from the folder, one line per file.
expect_ok predict --backend serial --load "$tmp/img.pcnn" "$tmp"/img/test/c3/*.png "$tmp"/img/test/c7/*.png
n3=$(ls "$tmp"/img/test/c3/*.png | wc -l); n7=$(ls "$tmp"/img/test/c7/*.png | wc -l)
[ "$(grep -c ': class [0-9]* c[0-9]  (' "$tmp/out")" -eq $((n3 + n7)) ] &&
  ok "predict: one named class per file" || fail "predict output: $(head -3 "$tmp/out")"
right=$(grep -c '/c3/.*: class 3 c3\|/c7/.*: class 7 c7' "$tmp/out")
[ "$right" -gt $(((n3 + n7) / 2)) ] && ok "predict: $right of $((n3 + n7)) files right" ||
  fail "predict: $right of $((n3 + n7)) right"
jpg=$(ls "$tmp"/img/train/*/*.jpg | head -1)
expect_ok predict --backend serial --load "$tmp/img.pcnn" "$jpg"
grep -q "\.jpg: class" "$tmp/out" && ok "predict reads a JPEG" || fail "predict JPEG: $(cat "$tmp/out")"

# eval on a folder (converted to the saved model's input); bench draws batches from CIFAR-10.
expect_ok eval --backend serial --load "$tmp/img.pcnn" --data "$tmp/img" --limit 30
grep -q "(30 test images)" "$tmp/out" && ok "eval reads an image folder" || fail "eval: $(cat "$tmp/out")"
expect_ok bench --backends serial --models "$tmp/rgb.json" --data "$tmp/c10" --data-format cifar10 \
  --batch-sizes 8 --repeat 3 --warmup 1 --budget 0.01 --per-layer none --out "$tmp/bench"
[ -s "$tmp/bench/bench.json" ] && ok "bench on CIFAR-10" || fail "bench: $(tail -3 "$tmp/err")"
# bench on a folder of images with models of other inputs: each gets the images at its own input
# (channels and size), as train converts them, not the first model's.
cat >"$tmp/grey20.json" <<'JSON'
{"name": "grey20", "input": [1, 20, 16], "classes": 10, "layers": [
  {"type": "conv", "units": 4, "kernel": 3, "act": "relu"}, {"type": "dense", "units": 10}]}
JSON
expect_ok bench --backends serial --models "$tmp/rgb.json,$tmp/grey20.json" --data "$tmp/img" \
  --batch-sizes 8 --repeat 3 --warmup 1 --budget 0.01 --per-layer none --out "$tmp/bench_img"
for m in rgb-small grey20; do
  grep -q "\"model\": \"$m\"" "$tmp/bench_img/bench.json" && ok "bench on a folder runs $m" ||
    fail "bench on a folder: no run of $m: $(tail -3 "$tmp/err")"
done
grep -q "converted to each model's input: 3x32x32, 1x20x16" "$tmp/bench_img/bench.json" &&
  ok "bench names both input shapes" || fail "bench data: $(grep '"data"' "$tmp/bench_img/bench.json")"

# bench without --data: synthetic images of each model's own input (colour, 20x16), not 28x28 grey.
expect_ok bench --backends serial --models "$tmp/rgb.json,$tmp/grey20.json,lenet5" \
  --batch-sizes 8 --repeat 3 --warmup 1 --budget 0.01 --per-layer none --images 64 \
  --out "$tmp/bench_syn"
grep -q "64 synthetic 3x32x32 images, 64 synthetic 20x16 images, 64 synthetic 28x28 images" \
  "$tmp/bench_syn/bench.json" && ok "bench's synthetic images take each model's input" ||
  fail "bench synthetic data: $(grep '"data"' "$tmp/bench_syn/bench.json"; tail -3 "$tmp/err")"

# --limit: the first N of each set (and --val-split of those N).
expect_ok train --backend serial --model "$tmp/rgb.json" --data "$tmp/c10" --epochs 1 \
  --batch-size 10 --limit 50 --val-split 0.2
grep -q "(40 train / 10 validation / 50 test images)" "$tmp/out" && ok "--limit 50 then --val-split" ||
  fail "--limit: $(head -1 "$tmp/out")"

# Usage errors: exit 2.
expect_usage_error "--val-split: must be above 0, got 0" train --val-split 0
expect_usage_error "--val-split: must be below 1, got 1" train --val-split 1
expect_usage_error "--val-split" train --val-split -0.5
expect_usage_error "--val-split takes" train --val-split abc
expect_usage_error "unknown data format 'png'" train --data-format png
expect_usage_error "holds out 0" train --backend serial --model "$tmp/rgb.json" --data "$tmp/c10" \
  --limit 20 --batch-size 10 --val-split 0.01

# Run-time errors: exit 1, one line.
expect_error "takes 1 input channel, the data set has 3" train --backend serial --data "$tmp/c10" \
  --batch-size 20 --epochs 1
expect_error "cannot tell the format" train --backend serial --data "$tmp" --epochs 1
mkdir -p "$tmp/trunc" && cp "$tmp"/c10/*.bin "$tmp/trunc/"
head -c 5000 "$tmp/c10/data_batch_3.bin" >"$tmp/trunc/data_batch_3.bin"
expect_error "data_batch_3.bin' is 5000 bytes, not a whole number of 3073-byte CIFAR records" \
  train --backend serial --model "$tmp/rgb.json" --data "$tmp/trunc" --epochs 1
rm "$tmp/trunc/data_batch_5.bin"
expect_error "has no data_batch_5.bin" train --backend serial --model "$tmp/rgb.json" \
  --data "$tmp/trunc" --data-format cifar10 --epochs 1
mkdir -p "$tmp/badlabel" && cp "$tmp"/c10/*.bin "$tmp/badlabel/"
printf '\x0c' | dd of="$tmp/badlabel/test_batch.bin" bs=1 seek=3073 conv=notrunc 2>/dev/null
expect_error "has label 12 (record 1), outside the 10 classes" train --backend serial \
  --model "$tmp/rgb.json" --data "$tmp/badlabel" --epochs 1
expect_error "the data set has 100 classes, model 'rgb-small' has 10" train --backend serial --model "$tmp/rgb.json" --data "$tmp/c100" --epochs 1
cp -r "$tmp/img" "$tmp/img2" && echo "notes" >"$tmp/img2/train/c4/readme.txt"
expect_error "img2/train/c4/readme.txt' is not an image" train --backend serial --model "$tmp/rgb.json" \
  --data "$tmp/img2" --epochs 1
rm "$tmp/img2/train/c4/readme.txt" && echo "not a png" >"$tmp/img2/train/c4/fake.png"
expect_error "img2/train/c4/fake.png' is neither a PNG nor a JPEG" train --backend serial \
  --model "$tmp/rgb.json" --data "$tmp/img2" --epochs 1
png=$(ls "$tmp"/img2/train/c5/*.png | head -1)
head -c 60 "$png" >"$tmp/cut.png" && mv "$tmp/cut.png" "$png"
rm "$tmp/img2/train/c4/fake.png"
expect_error "is not a readable PNG image" train --backend serial --model "$tmp/rgb.json" \
  --data "$tmp/img2" --epochs 1
expect_error "is not a readable PNG image" predict --load "$tmp/img.pcnn" "$png"
mkdir -p "$tmp/img3/train/a" "$tmp/img3/test/b"
cp "$jpg" "$tmp/img3/train/a/" && cp "$jpg" "$tmp/img3/test/b/"
expect_error "has class folder 'b', which the training set does not have" train --backend serial \
  --model "$tmp/rgb.json" --data "$tmp/img3" --epochs 1
finish "data format"
