#!/usr/bin/env bash
# Time to accuracy on the GPU machine: runs `pcnn train` once per recipe and keeps, for each,
# the test accuracy after every epoch with the training time so far, the final accuracy and the
# whole process's wall time (from /usr/bin/time). A recipe is a line of `pcnn train` options;
# `#` starts a comment. One short run first fills the decoded-data cache, so that no recipe pays
# for the decode.
# Usage: scripts/device/time_to_accuracy.sh PCNN RECIPES DATA [OUT_FILE]
set -uo pipefail
pcnn=$1 recipes=$2 data=$3 out=${4:-/dev/stdout}
$pcnn train --backend cuda --data "$data" --epochs 1 --limit 1000 -q > /dev/null 2>&1  # cache
while IFS= read -r line; do
  line=${line%%#*}
  [ -z "${line// }" ] && continue
  echo "=== $line" >> "$out"
  # shellcheck disable=SC2086  # a recipe is a list of options
  /usr/bin/time -f "wall %e s" $pcnn train --data "$data" -q $line 2>&1 \
    | grep -E "^epoch|final|wall|error" >> "$out"
done < "$recipes"
