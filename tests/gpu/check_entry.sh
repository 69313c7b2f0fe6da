#!/usr/bin/env bash
# check_entry.sh PATTERN COMMAND...: runs COMMAND (tlsrun --check), which
# must succeed and print a line matching the extended regular expression
# PATTERN: the line that names the entry that ran. tlsrun's exit 3 (no GPU
# or driver) becomes 77, which ctest reports as skipped.
set -u
pattern=$1
shift
out=$("$@")
rc=$?
printf '%s\n' "$out"
[ "$rc" = 3 ] && exit 77
[ "$rc" = 0 ] || exit "$rc"
if ! printf '%s\n' "$out" | grep -qE "$pattern"; then
  echo "FAIL: no line matches: $pattern"
  exit 1
fi
