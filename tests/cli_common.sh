# Sourced by the tests/cli_*.sh and readme_*.sh scripts: a scratch folder, ok/fail lines, the
# verdict, and CTest's skip code (77) where the default data set is not installed.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Exits 77 (skipped) when pcnn cannot find its default data set (Fashion-MNIST).
needs_default_data() {
  if "$pcnn" train --backend serial --model mlp --epochs 1 --limit 64 --quiet 2>&1 |
       grep -q "default data set is missing"; then
    echo "skipped: the default data set (Debian's dataset-fashion-mnist) is not installed"
    exit 77
  fi
}

# The last line: exit 1 if anything failed.
finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures $1 check(s) failed"
    exit 1
  fi
  echo "all $1 checks passed"
}
