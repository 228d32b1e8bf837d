#!/usr/bin/env bash
# pcnn eval warns, in one line on stderr, when the model file's provenance says it was trained
# on other data (other image counts, or other labels); it says nothing when the data matches
# (also copied to another folder, or cut by --limit) or when the model has no provenance. The
# model files are stamped through the library API by tests/tools/stamp_provenance.
# Usage: cli_provenance.sh PATH/TO/pcnn PATH/TO/stamp_provenance
set -u
pcnn=$1
stamp=$2
source "$(dirname "$0")/cli_expect.sh"
source "$(dirname "$0")/cli_data.sh"

make_data "$tmp/a" 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
cp -r "$tmp/a" "$tmp/a_copy"
make_data "$tmp/b" 5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0  # as many images, other labels
make_data "$tmp/c" 0 1 2 3 4 5 6 7 8 9              # fewer images

expect_ok train --backend serial --model mlp --epochs 1 --batch-size 4 --data "$tmp/a" --save "$tmp/m.pcnn"
"$stamp" "$tmp/m.pcnn" "$tmp/a" "$tmp/a.pcnn" || { echo "FAIL: stamping a.pcnn"; failures=$((failures + 1)); }
"$stamp" "$tmp/m.pcnn" - "$tmp/none.pcnn" || { echo "FAIL: stamping none.pcnn"; failures=$((failures + 1)); }

expect_eval() {  # expect_eval "the warning's words" | "" (no warning), then eval's arguments
  local want=$1; shift
  timeout 120 "$pcnn" eval --backend serial "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? lines; lines=$(wc -l <"$tmp/err")
  local verdict=ok
  [ "$rc" -eq 0 ] && grep -q "test accuracy" "$tmp/out" || verdict=FAIL
  if [ -z "$want" ]; then
    [ "$lines" -eq 0 ] || verdict=FAIL
  else
    [ "$lines" -eq 1 ] && grep -qF -- "pcnn eval: warning: " "$tmp/err" &&
      grep -qF -- "$want" "$tmp/err" || verdict=FAIL
  fi
  echo "$verdict: eval $* -> exit $rc, stderr: $(head -c 600 "$tmp/err")"
  [ "$verdict" = ok ] || failures=$((failures + 1))
}

expect_eval "" --load "$tmp/a.pcnn" --data "$tmp/a"
expect_eval "" --load "$tmp/a.pcnn" --data "$tmp/a_copy"
expect_eval "" --load "$tmp/a.pcnn" --data "$tmp/a" --limit 4
expect_eval "was trained on other data than $tmp/b (the test labels differ (crc32 " \
  --load "$tmp/a.pcnn" --data "$tmp/b"
expect_eval "was trained on other data than $tmp/c (trained on 16 / 16 images, given 10 / 10)" \
  --load "$tmp/a.pcnn" --data "$tmp/c"
expect_eval "" --load "$tmp/none.pcnn" --data "$tmp/b"

finish "eval provenance"
