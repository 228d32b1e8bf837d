#!/usr/bin/env bash
# Bad input must give one line on stderr naming what is wrong and the documented exit code:
# 2 for a usage error (unknown command or option, missing or bad value), 1 for an error at run
# time (missing or corrupt files, a backend not compiled in); never a crash.
# Usage: cli_errors.sh PATH/TO/pcnn
pcnn=$1
source "$(dirname "$0")/cli_common.sh"

expect_error() {  # expect_error EXIT_CODE "what the one line must contain" args...
  local code=$1 want=$2; shift 2
  "$pcnn" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines; lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne "$code" ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" "$tmp/err"; then
    fail "pcnn $* -> exit $rc (want $code), stderr ($lines lines): $(cat "$tmp/err")"
  else
    ok "pcnn $* -> exit $rc: $(cat "$tmp/err")"
  fi
}

# Usage errors: exit 2, the word at fault named, the closest valid word suggested.
expect_error 2 "unknown command 'trian' (did you mean 'train'?)" trian
expect_error 2 "unknown option '--epoch' (did you mean '--epochs'?); see 'pcnn train --help'" train --epoch 1
expect_error 2 "unknown option '--batch' (did you mean '--batch-size'?)" train --batch 8
expect_error 2 "unknown option '--modles' (did you mean '--models'?)" bench --modles mlp
expect_error 2 "unknown option '--not-an-option'" train --not-an-option
expect_error 2 "unexpected argument 'foo'" train foo
expect_error 2 "--epochs needs a value" train --epochs
expect_error 2 "--lr needs a value" train --lr --epochs 1
expect_error 2 "--epochs takes INT" train --epochs many
expect_error 2 "--epochs: must be at least 1, got 0" train --epochs 0
expect_error 2 "--batch-size: must be at least 1, got 0" train --batch-size 0
expect_error 2 "--batch-size takes INT" bench --batch-sizes 8,x
expect_error 2 "unknown backend 'nope'" train --backend nope --epochs 1
expect_error 2 "did you mean 'openmp'?" train --backend opnemp
expect_error 2 "unknown model 'resnet'" train --model resnet --epochs 1
expect_error 2 "unknown optimizer 'rmsprop'" train --optimizer rmsprop --epochs 1
expect_error 2 "unknown learning-rate schedule 'step'" train --lr-schedule step --epochs 1
expect_error 2 "--lr-decay: applies to --lr-schedule exp only" train --lr-schedule cosine --lr-decay 0.5
expect_error 2 "unknown recipe 'slow' (known: fast)" train --recipe slow
expect_error 2 "unknown precision 'fp8'" train --precision fp8
expect_error 2 "unknown precision 'half'" bench --precision half
expect_error 2 "--recipe: a checkpoint already holds its run's settings" train --recipe fast --resume "$tmp/x.ckpt"
expect_error 2 "--backend: takes one backend" train --backends serial,openmp
expect_error 2 "--load is required" eval
expect_error 2 "unknown command 'trian' (did you mean 'train'?)" help trian
expect_error 2 "--limit: must be at least the batch size (64), got 10" train --limit 10
expect_error 2 "--gpus: backend serial runs on the CPU, not on GPUs" train --backend serial --gpus 2
expect_error 2 "--augment: unknown augmentation 'rotate'" train --augment elastic,rotate
expect_error 2 "--augment: 'flip' is given twice" train --augment flip,crop,flip
expect_error 2 "--crop-pad: applies to crop, which --augment does not list" train --augment flip --crop-pad 2
expect_error 2 "--elastic-sigma: applies to elastic" train --elastic-sigma 3
expect_error 2 "--elastic-sigma: must be" train --augment elastic --elastic-sigma 0
expect_error 2 "--affine-scale: must be" train --augment affine --affine-scale 1
expect_error 2 "--crop-pad: must be at most 64, got 65" train --augment crop --crop-pad 65

# Run-time errors: exit 1.
expect_error 1 "is missing or not a folder" train --data "$tmp/missing" --epochs 1
mkdir -p "$tmp/bad"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  printf 'not an idx file' >"$tmp/bad/$f"
done
expect_error 1 "wrong magic number" train --data "$tmp/bad" --epochs 1
expect_error 1 "cannot open model file" eval --load "$tmp/nothing.pcnn"
expect_error 1 "cannot open" train --model "$tmp/nothing.json" --epochs 1
expect_error 1 "cannot open the log" plot --log "$tmp/nothing.csv" --out "$tmp/x.svg"
for b in openmp kokkos cuda cudnn; do
  if ! "$pcnn" backends | grep -q "^$b "; then
    expect_error 1 "not compiled into this build" train --backend "$b" --epochs 1
  fi
done
"$pcnn" backends >/dev/null || fail "pcnn backends exited $?"

finish "CLI error"
