#!/usr/bin/env bash
# Checkpoints under fire: a small training run is killed with SIGKILL at random points (inside
# steps, and inside checkpoint writes: --checkpoint-every 1 writes one after every step),
# resumed from its checkpoint each time, and must end with a model file identical byte for byte
# (cmp) to an uninterrupted run's, on serial, on openmp --threads 2 and on cuda (where usable).
# Also: SIGINT and SIGTERM stop cleanly (exit 130, checkpoint and model written, one line said),
# output paths are checked before training, a resume that contradicts its checkpoint or a corrupt
# checkpoint is refused with one line.
# Usage: kill_resume.sh PATH/TO/pcnn
set -u
pcnn=$1
source "$(dirname "$0")/cli_expect.sh"
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A small MNIST-format folder: N random 28x28 images per set, labels 0..9 in turn from FIRST.
be32() { printf "\\x$(printf %02x $(($1 >> 24 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 & 255)))"; }
make_data() {  # make_data DIR N FIRST
  local dir=$1 n=$2 first=$3
  mkdir -p "$dir"
  for set in train t10k; do
    { printf '\x00\x00\x08\x03'; be32 "$n"; be32 28; be32 28; head -c $((n * 784)) /dev/urandom; } \
      >"$dir/$set-images-idx3-ubyte"
    { printf '\x00\x00\x08\x01'; be32 "$n"
      for ((i = 0; i < n; ++i)); do printf "\\x0$(((i + first) % 10))"; done; } >"$dir/$set-labels-idx1-ubyte"
  done
}
make_data "$tmp/data" 256 0
make_data "$tmp/other" 256 1
# 3 epochs of 32 steps; the learning-rate decay and Adam's moments make every step count.
run=(--data "$tmp/data" --model lenet5 --epochs 3 --batch-size 8 --optimizer adam --lr-decay 0.5
     --seed 7)
kills=0 partial_writes=0

# Starts pcnn in the background with one progress line per step into a FIFO, reads lines until
# the Nth step line, waits DELAY seconds, then sends the signal. Sets rc to pcnn's exit status.
signal_after_steps() {  # signal_after_steps SIGNAL N DELAY args...
  local sig=$1 n=$2 delay=$3; shift 3
  rm -f "$tmp/fifo"; mkfifo "$tmp/fifo"
  "$pcnn" train "$@" --progress-every 1 >"$tmp/fifo" 2>"$tmp/err" &
  local pid=$! seen=0 line
  while IFS= read -r line; do
    case $line in *" step "*) seen=$((seen + 1)) ;; esac
    if [ "$seen" -eq "$n" ]; then sleep "$delay"; kill -s "$sig" "$pid" 2>/dev/null; fi
  done <"$tmp/fifo"
  { wait "$pid"; } 2>/dev/null  # no "Killed" from the shell
  rc=$?
}

# Kills the run 4 times at random steps, resuming each time, then lets it finish.
killed_run() {  # killed_run NAME MODEL_OUT args...
  local name=$1 out=$2; shift 2
  local ckpt="$tmp/$name.ckpt"
  rm -f "$ckpt" "$ckpt.tmp" "$out"
  local args=("$@" --checkpoint "$ckpt") round
  for round in 1 2 3 4; do
    # a random step, and a random instant in the checkpoint write or the step after it
    signal_after_steps KILL $((RANDOM % 16 + 1)) "$(printf '0.%03d' $((RANDOM % 20)))" "${args[@]}"
    if [ "$rc" -eq 137 ]; then kills=$((kills + 1)); fi
    if [ -e "$ckpt.tmp" ]; then partial_writes=$((partial_writes + 1)); fi
    if [ -e "$ckpt" ]; then args=(--resume "$ckpt" --data "$tmp/data"); fi
  done
  if ! timeout 300 "$pcnn" train "${args[@]}" --save "$out" >"$tmp/out" 2>"$tmp/err"; then
    fail "$name: the last resume failed: $(cat "$tmp/err")"
  fi
}

compare() {  # compare WHAT FILE REFERENCE
  if cmp -s "$2" "$3"; then ok "$1: identical to the uninterrupted run"; else fail "$1: differs"; fi
}

# cuda too where a GPU is usable (bitwise repeatable); elsewhere it reports as skipped.
for backend in "serial" "openmp --threads 2" "cuda"; do
  # shellcheck disable=SC2206
  be=(--backend $backend)
  if ! "$pcnn" backends | grep -q "^${be[1]}  *yes"; then
    echo "skipped: backend ${be[1]} is not usable here"
    continue
  fi
  expect_ok train "${be[@]}" "${run[@]}" --save "$tmp/ref.pcnn"
  cp "$tmp/ref.pcnn" "$tmp/ref-${be[1]}.pcnn"
  killed_run "every1-${be[1]}" "$tmp/k1.pcnn" "${be[@]}" "${run[@]}" --checkpoint-every 1
  compare "${be[1]}: killed 4 times, a checkpoint after every step" "$tmp/k1.pcnn" "$tmp/ref.pcnn"
  killed_run "every7-${be[1]}" "$tmp/k7.pcnn" "${be[@]}" "${run[@]}" --checkpoint-every 7
  compare "${be[1]}: killed 4 times, a checkpoint every 7 steps" "$tmp/k7.pcnn" "$tmp/ref.pcnn"
done
# fp16 activations: each resume goes on in the checkpoint's precision (no --precision given) and
# ends on the uninterrupted run's bytes. (The loss scale does not move in 96 steps; that it comes
# back from a checkpoint is test_precision.cpp's.)
expect_ok train --backend serial "${run[@]}" --precision fp16 --save "$tmp/ref16.pcnn"
killed_run "fp16" "$tmp/k16.pcnn" --backend serial "${run[@]}" --precision fp16 --checkpoint-every 7
compare "serial, fp16: killed 4 times, a checkpoint every 7 steps" "$tmp/k16.pcnn" "$tmp/ref16.pcnn"
echo "$kills runs killed, $partial_writes of them inside a checkpoint write (a stale .tmp left)"
[ "$kills" -gt 0 ] || fail "no run was killed: the runs ended before their signal"

# SIGINT / SIGTERM: the step ends, checkpoint and model are written, one line, exit 130; the
# resumed run ends where the uninterrupted one did.
for sig in INT TERM; do
  rm -f "$tmp/s.ckpt" "$tmp/s.pcnn"
  signal_after_steps "$sig" 20 0 --backend serial "${run[@]}" --checkpoint "$tmp/s.ckpt" --save "$tmp/s.pcnn"
  if [ "$rc" -eq 130 ] && [ -s "$tmp/s.ckpt" ] && [ -s "$tmp/s.pcnn" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
     grep -q "stopped by SIG$sig after step .* checkpoint written to .* model saved to" "$tmp/err"; then
    ok "SIG$sig: $(cat "$tmp/err")"
  else
    fail "SIG$sig: exit $rc, stderr: $(cat "$tmp/err")"
  fi
  "$pcnn" eval --load "$tmp/s.pcnn" --data "$tmp/data" >/dev/null 2>&1 || fail "SIG$sig: the model saved on the way out does not load"
  expect_ok train --resume "$tmp/s.ckpt" --backend serial --save "$tmp/s.pcnn"
  compare "SIG$sig, then --resume" "$tmp/s.pcnn" "$tmp/ref-serial.pcnn"
done

# A checkpoint made on one backend resumes on another.
if "$pcnn" backends | grep -q "^openmp  *yes"; then
  rm -f "$tmp/x.ckpt"
  signal_after_steps KILL 10 0 --backend serial "${run[@]}" --checkpoint "$tmp/x.ckpt" --checkpoint-every 4
  expect_ok train --resume "$tmp/x.ckpt" --backend openmp --threads 2 --save "$tmp/x.pcnn"
  [ -s "$tmp/x.pcnn" ] && ok "a serial checkpoint resumed on openmp" || fail "serial -> openmp resume"
fi

# Outputs are checked before the first step, named by their option, and nothing is left behind.
expect_error "--save: cannot write '$tmp/none/m.pcnn'" train --backend serial "${run[@]}" --save "$tmp/none/m.pcnn"
expect_error "--checkpoint: cannot write '$tmp/data'" train --backend serial "${run[@]}" --checkpoint "$tmp/data"
expect_error "--log: cannot write '$tmp/none/log.csv'" train --backend serial "${run[@]}" --log "$tmp/none/log.csv"
expect_error "--plot: cannot write" train --backend serial "${run[@]}" --plot "$tmp/data/"
[ -z "$(ls -A "$tmp/data" | grep -v ubyte)" ] && ok "no stray file left by the checks" || fail "stray files: $(ls -A "$tmp/data")"
expect_error "--checkpoint-every" train --backend serial "${run[@]}" --checkpoint-every 5

# A resume that would change the run, or on other data, or from a bad file, is refused.
expect_error "--lr: 0.5 contradicts the checkpoint" train --resume "$tmp/s.ckpt" --lr 0.5
expect_error "--epochs: 4 contradicts the checkpoint" train --resume "$tmp/s.ckpt" --epochs 4
expect_error "--model: 'mlp' (mlp) contradicts" train --resume "$tmp/s.ckpt" --model mlp
expect_error "are not those the checkpoint" train --resume "$tmp/s.ckpt" --data "$tmp/other"
head -c 1000 "$tmp/s.ckpt" >"$tmp/cut.ckpt"
expect_error "'$tmp/cut.ckpt' is truncated" train --resume "$tmp/cut.ckpt"
expect_error "is not a ParallelCNN checkpoint" train --resume "$tmp/ref.pcnn"
finish "kill-and-resume"
