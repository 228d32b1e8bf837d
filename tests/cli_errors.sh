#!/usr/bin/env bash
# Bad input must give one clear line on stderr and a non-zero exit, never a crash.
# Usage: cli_errors.sh PATH/TO/pcnn
set -u
pcnn=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

expect_error() {  # expect_error "what the message must contain" args...
  local want=$1; shift
  "$pcnn" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines; lines=$(wc -l <"$tmp/err")
  if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$want" "$tmp/err"; then
    echo "FAIL: pcnn $* -> exit $rc, stderr ($lines lines): $(cat "$tmp/err")"
    failures=$((failures + 1))
  else
    echo "ok: pcnn $* -> $(cat "$tmp/err")"
  fi
}

expect_error "unknown backend 'nope'" train --backend nope --epochs 1
expect_error "unknown model 'resnet'" train --model resnet --epochs 1
expect_error "has no train-" train --data "$tmp/missing" --epochs 1
mkdir -p "$tmp/bad"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  printf 'not an idx file' >"$tmp/bad/$f"
done
expect_error "wrong magic number" train --data "$tmp/bad" --epochs 1
expect_error "cannot open model file" eval --load "$tmp/nothing.pcnn"
expect_error "--epochs must be at least 1" train --epochs 0
expect_error "unknown optimizer 'rmsprop'" train --optimizer rmsprop --epochs 1
expect_error "batch-size" train --batch-size 0
expect_error "not-an-option" train --not-an-option
for b in openmp kokkos cuda cudnn; do
  if ! "$pcnn" backends | grep -q "^$b "; then
    expect_error "not compiled into this build" train --backend "$b" --epochs 1
  fi
done
"$pcnn" backends >/dev/null || { echo "FAIL: pcnn backends"; failures=$((failures + 1)); }

if [ "$failures" -ne 0 ]; then
  echo "$failures CLI error check(s) failed"
  exit 1
fi
echo "all CLI error checks passed"
