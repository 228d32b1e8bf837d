#!/usr/bin/env bash
# A README that stays true: every ./build/pcnn command in README.md's code blocks is run, in the
# order shown, in one scratch folder (so a later command finds what an earlier one wrote), with
# sizes cut down: one epoch of 512 images for train, batch 8 and a 10 ms budget for bench. A
# command passes when it exits 0 and every file it was told to write (--save, --log, --plot,
# --out) exists. One that names a backend not usable here, or reads a file that is not here,
# is reported as skipped with the reason.
# Usage: readme_commands.sh PATH/TO/pcnn README.md
pcnn=$(realpath "$1")
readme=$(realpath "$2")
source "$(dirname "$0")/cli_common.sh"
needs_default_data
ran=0
skipped=0

# The lines of fenced code blocks, from ./build/pcnn to the end of the line, to a # comment, or
# to what the shell would run after it (| && ;).
commands() {
  awk '/^```/ { fenced = !fenced; next }
       fenced && index($0, "./build/pcnn ") {
         line = substr($0, index($0, "./build/pcnn "))
         sub(/[ \t]+#.*$/, "", line)
         sub(/[ \t]*(\||&&|;).*$/, "", line)
         print line
       }' "$readme"
}

usable=" $("$pcnn" backends | awk 'NR > 1 && $2 == "yes" { printf "%s ", $1 }')"

# words: the command being built; set_option NAME VALUE ALIAS...: replace the value of the
# option (under any of its names) or append it.
set_option() {
  local value=$1 i name; shift
  for ((i = 0; i < ${#words[@]}; ++i)); do
    for name in "$@"; do
      if [ "${words[i]}" = "$name" ]; then words[i + 1]=$value; return; fi
    done
  done
  words+=("$1" "$value")
}
value_of() {  # value_of ALIAS...: the option's value in words, or nothing
  local i name
  for ((i = 0; i < ${#words[@]}; ++i)); do
    for name in "$@"; do
      if [ "${words[i]}" = "$name" ]; then echo "${words[i + 1]}"; return; fi
    done
  done
}

mkdir "$tmp/work" && cd "$tmp/work" || exit 1
while IFS= read -r line; do
  line=$(sed -e 's/\[[^]]*\]//g' -e "s|~/|$HOME/|g" <<<"$line")  # [optional parts] left out
  read -ra words <<<"${line#./build/pcnn }"
  why=""
  unusable=""
  for b in $(value_of --backend --backends -b | tr ',' ' '); do
    case "$usable" in *" $b "*) ;; *) unusable+=" $b";; esac
  done
  [ -n "$unusable" ] && why="not usable here:$unusable"
  inputs=(--load --from --data -d)
  [ "${words[0]}" = plot ] && inputs+=(--log)
  for input in "${inputs[@]}"; do
    f=$(value_of "$input")
    [ -n "$f" ] && [ ! -e "$f" ] && why="it reads $f, which is not here"
  done
  if [ -n "$why" ]; then
    echo "skipped: $line ($why)"
    skipped=$((skipped + 1))
    continue
  fi
  case "${words[0]}" in
    train) set_option 1 --epochs -e; set_option 512 --limit ;;
    bench) if [ "$(value_of --from)" = "" ]; then
             set_option 8 --batch-size --batch-sizes; set_option 3 --repeat
             set_option 1 --warmup; set_option 0.01 --budget
           fi ;;
  esac
  outputs=()
  for output in --save --out --plot; do f=$(value_of "$output"); [ -n "$f" ] && outputs+=("$f"); done
  [ "${words[0]}" = train ] && f=$(value_of --log) && [ -n "$f" ] && outputs+=("$f")
  rm -rf "${outputs[@]}"
  "$pcnn" "${words[@]}" >"$tmp/out" 2>&1
  rc=$?
  ran=$((ran + 1))
  missing=""
  for f in "${outputs[@]}"; do [ -s "$f" ] || [ -d "$f" ] || missing+=" $f"; done
  if [ "$rc" -ne 0 ] || [ -n "$missing" ]; then
    fail "$line -> ran 'pcnn ${words[*]}': exit $rc${missing:+, not written:$missing}"
    tail -5 "$tmp/out"
  else
    ok "$line (ran 'pcnn ${words[*]}')"
  fi
done < <(commands)

echo "$ran README commands run, $skipped skipped"
[ "$ran" -gt 0 ] || fail "no ./build/pcnn command found in $readme"
finish "README command"
