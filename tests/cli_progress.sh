#!/usr/bin/env bash
# Progress of pcnn train: into a pipe, plain flushed lines (the header at once, a progress line
# within seconds, --progress-every N for every N steps); on a terminal, one line redrawn in
# place; --quiet, epoch lines only.
# Usage: cli_progress.sh PATH/TO/pcnn
pcnn=$1
source "$(dirname "$0")/cli_common.sh"
needs_default_data
small=(--backend serial --model mlp --epochs 1 --limit 2048 --batch-size 64)

# --progress-every 8 into a pipe: 32 steps give lines at steps 8, 16, 24 and 32.
"$pcnn" train "${small[@]}" --progress-every 8 | cat >"$tmp/every"
last_step_at=$(grep -n "step 32/32" "$tmp/every" | cut -d: -f1)
epoch_at=$(grep -n "^epoch  1/1  train_loss" "$tmp/every" | cut -d: -f1)
if head -1 "$tmp/every" | grep -q "^pcnn train: mlp" &&
   [ "$(grep -c "step [ 0-9]*[0-9]/32  loss" "$tmp/every")" -eq 4 ] &&
   grep -q "step 16/32  loss [0-9.]*  *[0-9]* images/s  elapsed .* s  ETA .* s" "$tmp/every" &&
   [ -n "$last_step_at" ] && [ -n "$epoch_at" ] && [ "$last_step_at" -lt "$epoch_at" ]; then
  ok "--progress-every 8: header first, four progress lines before the epoch line"
else
  fail "--progress-every 8:"; cat "$tmp/every"
fi

# Into a pipe without --progress-every: each line stamped with when it arrived. A serial
# LeNet-5 epoch of 12000 images takes a few seconds: a progress line must come within 5 s of
# the start and before the epoch line, the header before either.
start=$(date +%s.%N)
"$pcnn" train --backend serial --model lenet5 --epochs 1 --limit 12000 |
  while IFS= read -r line; do echo "$(date +%s.%N) $line"; done >"$tmp/timed"
first_step=$(grep -m1 " step " "$tmp/timed" | cut -d' ' -f1)
epoch_line=$(grep -m1 " epoch  1/1  train_loss" "$tmp/timed" | cut -d' ' -f1)
header=$(grep -m1 " pcnn train:" "$tmp/timed" | cut -d' ' -f1)
if [ -n "$first_step" ] && [ -n "$epoch_line" ] && [ -n "$header" ] &&
   awk -v s="$start" -v p="$first_step" -v e="$epoch_line" -v h="$header" \
       'BEGIN { exit !(p - s <= 5 && p <= e && h <= p) }'; then
  ok "into a pipe: header, then a progress line $(awk -v s="$start" -v p="$first_step" 'BEGIN { printf "%.1f", p - s }') s after the start"
else
  fail "into a pipe: no progress line within 5 s before the epoch line (start $start)"; cat "$tmp/timed"
fi

# On a terminal (script gives the command one): the line is redrawn with \r and erase-line.
if command -v script >/dev/null; then
  script -qfec "'$pcnn' train --backend serial --model lenet5 --epochs 1 --limit 6000" /dev/null >"$tmp/tty" 2>&1
  redraws=$(grep -o $'\r\e\[K' "$tmp/tty" | wc -l)
  if [ "$redraws" -ge 2 ] && grep -q "step .*/93  loss" "$tmp/tty" && grep -q "^epoch  1/1  train_loss" <(tr '\r' '\n' <"$tmp/tty" | sed $'s/\e\[K//g'); then
    ok "on a terminal: the progress line redrawn in place ($redraws redraws)"
  else
    fail "on a terminal: $redraws redraws"; cat -v "$tmp/tty"
  fi
else
  echo "skipped: terminal check (no 'script' command)"
fi

# --quiet: epoch lines and the final line only.
"$pcnn" train "${small[@]}" --progress-every 8 --quiet | cat >"$tmp/quiet"
if [ "$(wc -l <"$tmp/quiet")" -eq 2 ] && grep -q "^epoch  1/1  train_loss" "$tmp/quiet" &&
   grep -q "^final test accuracy" "$tmp/quiet"; then
  ok "--quiet: epoch line and final line"
else
  fail "--quiet:"; cat "$tmp/quiet"
fi

finish "progress"
