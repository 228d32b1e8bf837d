#!/usr/bin/env bash
# The conventions people expect of a command-line tool: --version, help, the program named
# `pcnn`, exit codes stated in --help, the same option names in train and bench (singular and
# plural), --gpus refused on a CPU backend, and a backends table whose columns line up.
# Usage: cli_conventions.sh PATH/TO/pcnn
pcnn=$1
source "$(dirname "$0")/cli_common.sh"
needs_default_data

check() {  # check "description" EXIT_CODE "stdout or stderr must contain" args...
  local what=$1 code=$2 want=$3; shift 3
  "$pcnn" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$code" ] || ! cat "$tmp/out" "$tmp/err" | grep -qF -- "$want"; then
    fail "$what: pcnn $* -> exit $rc (want $code); stdout: $(head -c 400 "$tmp/out"); stderr: $(cat "$tmp/err")"
  else
    ok "$what"
  fi
}

check "--version names version and commit" 0 "pcnn 0." --version
check "--version lists the backends compiled in" 0 "backends compiled in: " --version
check "help lists the commands" 0 "train" help
check "help COMMAND shows that command's usage" 0 "Usage: pcnn train [OPTIONS]" help train
check "help eval needs no --load" 0 "Usage: pcnn eval [OPTIONS]" help eval
check "COMMAND --help is the same" 0 "Usage: pcnn bench [OPTIONS]" bench --help
check "--help states the exit codes" 0 "2 usage error" --help
check "a command's --help states them too" 0 "1 run-time error" train --help
check "train takes the plural spelling" 0 "epoch  1/1" train --backends serial --models mlp --batch-sizes 32 --epochs 1 --limit 256 --quiet
check "bench takes the singular spelling" 0 "[1/1] serial               mlp         batch     8" bench --backend serial --model mlp --batch-size 8 --repeat 3 --warmup 1 --budget 0.01 --per-layer none
check "the last of a repeated option wins" 0 "epoch  1/1" train --backend serial --model mlp --epochs 3 --epochs 1 --limit 256 --quiet

# pcnn alone: the help on stderr and the usage-error code.
"$pcnn" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "Usage: pcnn" "$tmp/err"; then ok "pcnn alone"; else fail "pcnn alone -> exit $rc"; fi

# The program is called pcnn, whatever path it was started by.
if "$pcnn" --help | grep -q "Usage: pcnn \[OPTIONS\]"; then ok "program name"; else fail "program name: $("$pcnn" --help | grep Usage)"; fi

# --gpus on a CPU backend: refused (usage error), or run and said plainly with --collective host.
"$pcnn" train --backend serial --gpus 2 --epochs 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "runs on the CPU" "$tmp/err"; then ok "--gpus refused on serial"; else fail "--gpus on serial -> exit $rc: $(cat "$tmp/err")"; fi
check "--gpus with --collective host says where the replicas run" 0 "replicas on the CPU" \
  train --backend serial --model mlp --gpus 2 --collective host --epochs 1 --limit 256

# pcnn backends: every cell of a column starts at the same offset (the header's).
"$pcnn" backends >"$tmp/out"
header=$(head -1 "$tmp/out")
for column in "usable" "what it is" "runs on"; do
  at=$(awk -v h="$header" -v c="$column" 'BEGIN { print index(h, c) }')
  while IFS= read -r row; do
    case "$row" in "not compiled in:"*) continue ;; esac
    if [ "${row:at-2:1}" != " " ] || [ "${row:at-1:1}" = " " ]; then
      fail "backends: column '$column' (offset $at) not aligned in: $row"
    fi
  done < <(tail -n +2 "$tmp/out")
done
ok "backends table aligned"

finish "convention"
