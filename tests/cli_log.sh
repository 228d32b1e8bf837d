#!/usr/bin/env bash
# The training log: the columns promised, epoch rows and step rows told apart by the step
# column, numbers that read back exactly, and pcnn plot drawing from the file the very figure
# pcnn train --plot drew from the run. A log in the old five-column form still plots.
# Usage: cli_log.sh PATH/TO/pcnn
pcnn=$1
source "$(dirname "$0")/cli_common.sh"
needs_default_data

# 2048 images in batches of 64: 32 steps per epoch, a step row every 10 steps.
"$pcnn" train --backend serial --model mlp --epochs 2 --limit 2048 --log-every 10 \
  --log "$tmp/log.csv" --plot "$tmp/run.svg" --quiet >"$tmp/out" || fail "train exited $?"

want="epoch,train_loss,train_accuracy,test_loss,test_accuracy,learning_rate,images_per_s,elapsed_s,step"
if [ "$(head -1 "$tmp/log.csv")" = "$want" ]; then ok "header: $want"; else fail "header: $(head -1 "$tmp/log.csv")"; fi

# Epoch rows: every field but step filled. Step rows: step set, test figures empty.
epoch_rows=$(awk -F, 'NR > 1 && $9 == "" && $2 != "" && $4 != "" && $5 != "" && $6 != "" && $8 != ""' "$tmp/log.csv" | wc -l)
step_rows=$(awk -F, 'NR > 1 && $9 != "" && $4 == "" && $5 == "" && $2 != ""' "$tmp/log.csv" | wc -l)
steps=$(awk -F, 'NR > 1 && $9 != "" { printf "%s ", $9 }' "$tmp/log.csv")
if [ "$epoch_rows" -eq 2 ] && [ "$step_rows" -eq 6 ] && [ "$steps" = "10 20 30 42 52 62 " ]; then
  ok "2 epoch rows, 6 step rows at steps $steps"
else
  fail "$epoch_rows epoch rows, $step_rows step rows, steps '$steps':"; cat "$tmp/log.csv"
fi

# The epoch lines on stdout and the epoch rows agree; the learning rate decays by 0.75.
awk -F, 'NR > 1 && $9 == "" { printf "%d %.4f %.4f\n", $1, $2, $5 }' "$tmp/log.csv" >"$tmp/from_csv"
sed -n 's/^epoch *\([0-9]*\)\/2  train_loss \([0-9.]*\)  test_acc \([0-9.]*\).*/\1 \2 \3/p' "$tmp/out" >"$tmp/from_stdout"
if cmp -s "$tmp/from_csv" "$tmp/from_stdout"; then ok "epoch rows match the epoch lines"; else fail "epoch rows vs lines:"; paste "$tmp/from_csv" "$tmp/from_stdout"; fi
if awk -F, 'NR > 1 && $9 == "" { lr[$1] = $6 } END { exit !(lr[1] == 0.002 && lr[2] == 0.0015) }' "$tmp/log.csv"; then
  ok "learning rate column: 0.002, then 0.0015"
else
  fail "learning rates: $(cut -d, -f6 "$tmp/log.csv" | tr '\n' ' ')"
fi

# --recipe fast: its network, batch and cosine schedule (2 epochs: 0.003, then 0.003 * (1 +
# cos(pi/2)) / 2), an option given beside it kept.
"$pcnn" train --backend serial --recipe fast --epochs 2 --limit 256 --log "$tmp/fast.csv" >"$tmp/fast" ||
  fail "train --recipe fast exited $?"
if grep -q "^pcnn train: fast3x3 on .* batch 128, adam lr 0.003, cosine schedule$" "$tmp/fast" &&
   awk -F, 'NR > 1 && $9 == "" { lr[$1] = $6 } END { exit !(lr[1] == 0.003 && lr[2] == 0.0015) }' "$tmp/fast.csv"; then
  ok "--recipe fast: fast3x3, batch 128, cosine learning rates 0.003, 0.0015"
else
  fail "--recipe fast: $(head -1 "$tmp/fast"); rates $(cut -d, -f6 "$tmp/fast.csv" | tr '\n' ' ')"
fi

# --precision: named in the header and the recipe a saved model keeps; the memory line says what
# the 16-bit storage takes; a checkpoint resumes in it, and refuses another precision.
"$pcnn" train --backend serial --model mlp --precision fp16 --epochs 1 --limit 256 \
  --save "$tmp/half.pcnn" --checkpoint "$tmp/half.ckpt" >"$tmp/half" || fail "train --precision fp16 exited $?"
if grep -q "^pcnn train: mlp on .*, activations in fp16 (dynamic loss scale)$" "$tmp/half" &&
   grep -q "in fp16 the layer outputs and gradients take" "$tmp/half" &&
   grep -qa "epochs, activations fp16" "$tmp/half.pcnn"; then
  ok "--precision fp16: header, memory line, saved recipe"
else
  fail "--precision fp16: $(cat "$tmp/half")"
fi
"$pcnn" train --backend serial --model mlp --precision bf16 --epochs 1 --limit 256 \
  --resume "$tmp/half.ckpt" >"$tmp/half_resume" 2>&1
if [ $? -eq 2 ] && grep -q -- "--precision" "$tmp/half_resume"; then
  ok "--resume of an fp16 checkpoint refuses --precision bf16"
else
  fail "resume with another precision: $(cat "$tmp/half_resume")"
fi

# No number in shortened scientific form like 1.23457e+06 (six digits: not a round trip).
if grep -qE '[0-9]\.[0-9]{5}e[+-]' "$tmp/log.csv"; then fail "six-digit numbers in the log"; else ok "no six-digit scientific numbers"; fi

# pcnn plot redraws exactly the figure of the run from the file.
"$pcnn" plot --log "$tmp/log.csv" --out "$tmp/replot.svg" --title "mlp on serial" >/dev/null || fail "plot exited $?"
if cmp -s "$tmp/run.svg" "$tmp/replot.svg"; then ok "pcnn plot redraws the run's SVG byte for byte"; else fail "replot differs from the run's plot"; fi
if grep -q "training loss within epochs" "$tmp/replot.svg"; then ok "step rows drawn"; else fail "no step chart"; fi

# A log written before the new columns: still read, by column name.
printf 'epoch,train_loss,test_accuracy,images_per_s,elapsed_s\n1,0.46,0.85,16690.9,3.8\n2,0.33,0.86,14235.4,8.3\n' >"$tmp/old.csv"
if "$pcnn" plot --log "$tmp/old.csv" --out "$tmp/old.svg" >/dev/null && grep -q "test accuracy" "$tmp/old.svg"; then
  ok "an old five-column log plots"
else
  fail "old log"
fi

# --timings: the phase table after the final line; --summary: the same phases and the memory
# figures as JSON, the peak at least the model's parameters and their gradients.
# A cache folder of its own: the first run decodes the files and keeps them, the second reads
# them back, --no-data-cache decodes again.
timed() { PCNN_CACHE_DIR="$tmp/cache" "$pcnn" train --backend serial --model mlp --epochs 1 --limit 512 --timings "$@"; }
timed --summary "$tmp/summary.json" >"$tmp/timed" || fail "train --timings exited $?"
timed >"$tmp/timed2" && grep -q "^read (cached) train-images-idx3-ubyte" "$tmp/timed2" &&
  timed --no-data-cache >"$tmp/timed3" && grep -q "^read+decode train-images" "$tmp/timed3" &&
  [ "$(grep -c "^read (cached)" "$tmp/timed3")" = 0 ] && ok "the decoded-data cache: kept, used, and skipped" ||
  fail "cache: $(grep "^read" "$tmp/timed2" "$tmp/timed3")"
for phase in "process start to main" "backend creation (serial)" \
             "read+decode train-images-idx3-ubyte" "read+decode t10k-labels-idx1-ubyte" \
             "model build + upload" "first 2 steps (eager)" "evaluation" "whole process"; do
  grep -q "^$phase" "$tmp/timed" || fail "no '$phase' row in the --timings table"
done
grep -q "^memory: peak .* allocated through serial" "$tmp/timed" && ok "the memory line" ||
  fail "memory line: $(grep memory "$tmp/timed")"
if python3 - "$tmp/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
phases = {p["phase"]: p for p in s["timings"]}
whole = s["process_seconds"]
assert 0 < phases["evaluation"]["seconds"] < whole, phases["evaluation"]
assert all(0 <= p["start_s"] <= whole and p["seconds"] >= 0 for p in s["timings"]), s["timings"]
m = s["memory"]
# mlp: 266,610 parameters; with their gradients 2,132,880 bytes; evaluation batch 256
assert m["backend_peak_bytes"] >= 2132880 + 256 * m["activation_bytes_per_image"], m
assert m["device_in_use_bytes"] is None and 0 < s["final_test_accuracy"] <= 1
PY
then ok "--summary JSON: phases, process seconds, memory"; else fail "--summary: $(cat "$tmp/summary.json")"; fi

finish "log"
