#!/usr/bin/env bash
# check.sh: run a command and compare what it printed with a golden file.
#
#   tests/check.sh [--status N] [--stream stdout|stderr|both] [--filter SED]
#                  EXPECTED -- COMMAND [ARGS...]
#
# --status N     the exit status the command must return (default 0)
# --stream S     which output is compared (default stdout; both = stdout
#                then stderr, concatenated)
# --filter SED   a sed expression applied to the output before comparing
# EXPECTED       the golden file; with UPDATE_GOLDEN=1 it is rewritten
#
# Exits 0 when status and output match, 1 otherwise (with a diff).
set -u
status=0 stream=stdout filter=
while [ $# -gt 0 ]; do
  case "$1" in
    --status) status=$2; shift 2 ;;
    --stream) stream=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --) shift; break ;;
    *) expected=$1; shift ;;
  esac
done
: "${expected:?usage: check.sh [options] EXPECTED -- COMMAND...}"
out=$(mktemp) err=$(mktemp) got=$(mktemp)
trap 'rm -f "$out" "$err" "$got"' EXIT
timeout 60 "$@" >"$out" 2>"$err" </dev/null
rc=$?
case "$stream" in
  stdout) cat "$out" >"$got" ;;
  stderr) cat "$err" >"$got" ;;
  both) cat "$out" "$err" >"$got" ;;
esac
if [ -n "$filter" ]; then sed -i -e "$filter" "$got"; fi
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$got" "$expected"; fi
fail=0
if [ "$rc" != "$status" ]; then
  echo "FAIL: exit status $rc, expected $status: $*"
  echo "--- stderr:"; head -50 "$err"
  fail=1
fi
if ! diff -u "$expected" "$got" >/dev/null 2>&1; then
  echo "FAIL: output differs from $expected: $*"
  diff -u "$expected" "$got" | head -80
  fail=1
fi
exit $fail
