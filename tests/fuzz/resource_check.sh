#!/usr/bin/env bash
# resource_check.sh [--no-memory-limit] TLSC DIR...: every file of each DIR
# (a fuzz corpus, the seeds, the regressions) is compiled by tlsc within
# 2 s of CPU time and 1 GiB of address space, and either compiles (exit 0)
# or is refused with a diagnostic (exit 1, "error:" on stderr). A signal, a
# timeout, an exit status of 2 or more, or a silent failure is reported and
# fails the check. --no-memory-limit for sanitizer builds, whose shadow
# memory needs terabytes of address space.
set -u
mem_kb=$((1024 * 1024))
if [ "${1:-}" = --no-memory-limit ]; then mem_kb=unlimited; shift; fi
tlsc=$1
shift
checked=0 bad=0 err=$(mktemp)
trap 'rm -f "$err"' EXIT
for dir in "$@"; do
  for f in "$dir"/*; do
    [ -f "$f" ] || continue
    checked=$((checked + 1))
    (ulimit -t 2 -v "$mem_kb"; exec "$tlsc" "$f" -o /dev/null) 2>"$err"
    rc=$?
    if [ $rc = 0 ]; then continue; fi
    if [ $rc = 1 ] && grep -q 'error:' "$err"; then continue; fi
    bad=$((bad + 1))
    echo "resource_check: $f: exit $rc: $(head -c 300 "$err" | head -3)"
  done
done
echo "resource_check: $checked inputs, $bad over 2 s / 1 GiB or without a diagnostic"
[ $checked -gt 0 ] && [ $bad = 0 ]
