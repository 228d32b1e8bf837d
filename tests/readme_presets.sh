#!/usr/bin/env bash
# The README's table of CMake presets (rows "| `cmake --preset NAME` | ...") names exactly the
# configure presets of CMakePresets.json, as CMake itself lists them.
# Usage: readme_presets.sh README.md SOURCE_DIR CMAKE_COMMAND
readme=$1
source_dir=$2
cmake=$3
source "$(dirname "$0")/cli_common.sh"

(cd "$source_dir" && "$cmake" --list-presets=configure) |
  sed -n 's/^ *"\([^"]*\)".*/\1/p' | sort >"$tmp/presets"
sed -n 's/^| `cmake --preset \([^`]*\)`.*/\1/p' "$readme" | sort >"$tmp/readme"
if [ ! -s "$tmp/presets" ]; then
  fail "cmake --list-presets=configure listed nothing"
elif cmp -s "$tmp/presets" "$tmp/readme"; then
  ok "README lists the presets $(tr '\n' ' ' <"$tmp/presets")"
else
  fail "README's preset table and CMakePresets.json differ (< CMakePresets.json, > README):"
  diff "$tmp/presets" "$tmp/readme"
fi
finish "preset"
