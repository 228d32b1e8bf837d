#!/usr/bin/env bash
# pcnn predict: a model trained on a tiny folder classifies that folder's test images, and its
# answers agree with pcnn eval (the share of right classes is the accuracy eval prints); the
# probabilities shown sum to at most 1 and come most probable first; bad input is one line.
# Usage: cli_predict.sh PATH/TO/pcnn
set -u
pcnn=$1
source "$(dirname "$0")/cli_expect.sh"
source "$(dirname "$0")/cli_data.sh"

labels=(); for i in $(seq 0 39); do labels+=($((i % 10))); done
make_data "$tmp/data" "${labels[@]}"
expect_ok train --backend serial --data "$tmp/data" --epochs 3 --batch-size 8 --save "$tmp/m.pcnn" -q
expect_ok eval --backend serial --load "$tmp/m.pcnn" --data "$tmp/data"
eval_acc=$(sed -n 's/.*test accuracy \([0-9.]*\),.*/\1/p' "$tmp/out")

expect_ok predict --backend serial --load "$tmp/m.pcnn" --images "$tmp/data/t10k-images-idx3-ubyte" \
  --count 40 --top 10
lines=$(grep -c "^image " "$tmp/out")
[ "$lines" -eq 40 ] && echo "ok: 40 images classified" || { echo "FAIL: $lines image lines"; failures=$((failures + 1)); }
right=0; i=0
while read -r _ _ _ class _; do
  [ "$class" -eq "${labels[$i]}" ] && right=$((right + 1)); i=$((i + 1))
done < <(grep "^image " "$tmp/out")
predict_acc=$(awk -v r="$right" 'BEGIN { printf "%.4f", r / 40 }')
if [ -n "$eval_acc" ] && [ "$predict_acc" = "$eval_acc" ]; then
  echo "ok: predict's classes are right for $right of 40 images, eval's accuracy $eval_acc"
else
  echo "FAIL: predict right for $predict_acc, eval says '$eval_acc'"; failures=$((failures + 1))
fi
# each line: the class shown first is the most probable, the probabilities fall and sum to ~1
if awk '/^image / { gsub(/[(),]/, " "); c = $4; if ($5 != c) bad = 1; s = 0; last = 2;
         for (k = 5; k < NF; k += 2) { p = $(k + 1); s += p; if (p > last) bad = 1; last = p }
         if (s < 0.999 || s > 1.001) bad = 1 } END { exit bad }' "$tmp/out"; then
  echo "ok: classes most probable first, probabilities summing to 1"
else
  echo "FAIL: probabilities out of order or not summing to 1:"; head -3 "$tmp/out"; failures=$((failures + 1))
fi

expect_ok predict --backend serial --load "$tmp/m.pcnn" --images "$tmp/data/t10k-images-idx3-ubyte" --first 38
[ "$(grep -c "^image " "$tmp/out")" -eq 2 ] && echo "ok: --first 38 classifies the last 2" ||
  { echo "FAIL: --first 38: $(cat "$tmp/out")"; failures=$((failures + 1)); }
expect_error "is past the last image" predict --load "$tmp/m.pcnn" --images "$tmp/data/t10k-images-idx3-ubyte" --first 40
expect_error "cannot open model file" predict --load "$tmp/none.pcnn" --images "$tmp/data/t10k-images-idx3-ubyte"
expect_error "is not an IDX file" predict --load "$tmp/m.pcnn" --images "$tmp/m.pcnn"
expect_usage_error "--count: must be at least 1" predict --load "$tmp/m.pcnn" --images x --count 0
expect_usage_error "give an IDX file with --images, or image files" predict --load "$tmp/m.pcnn"
finish "predict"
