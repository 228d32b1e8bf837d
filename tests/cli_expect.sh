# Sourced by the command-line test scripts: runs pcnn ($pcnn) with bad input and checks that it
# ends as every error must: a non-zero exit that is not a signal or a timeout, exactly one line
# on stderr holding the expected words, and no training epoch printed. Counts into $failures;
# scratch files go to $tmp (made here, removed on exit).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

expect_error() {  # expect_error "what the message must contain" args...
  local want=$1; shift
  timeout 120 "$pcnn" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?  # global: expect_usage_error reads it
  local lines; lines=$(wc -l <"$tmp/err")
  if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$want" "$tmp/err" ||
     grep -q "^epoch" "$tmp/out"; then
    echo "FAIL: pcnn $* -> exit $rc, stderr ($lines lines): $(head -c 600 "$tmp/err")"
    failures=$((failures + 1))
  else
    echo "ok: $(cat "$tmp/err")"
  fi
}

expect_usage_error() {  # expect_usage_error "words" args...: expect_error, and the exit code is 2
  expect_error "$@"
  [ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, not 2 (usage error)"; failures=$((failures + 1)); }
}

expect_ok() {  # expect_ok args...: pcnn must succeed
  if ! timeout 300 "$pcnn" "$@" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: pcnn $* -> $(cat "$tmp/err")"
    failures=$((failures + 1))
  fi
}

finish() {  # finish "what was checked": the summary line and the exit code
  if [ "$failures" -ne 0 ]; then
    echo "$failures $1 check(s) failed"
    exit 1
  fi
  echo "all $1 checks passed"
}
