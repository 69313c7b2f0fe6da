#!/bin/sh
# sass_loops.sh SCRIPT: scripts/sass_loops.py on the fixtures here: two
# files side by side (the inner loop of OuterInner, the loop of Flat), one
# file alone, and a function without a loop (exit 1, its message).
here=$(dirname "$0")
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for args in "$here/loops_a.sass $here/loops_b.sass" "$here/loops_b.sass --fun Flat" \
            "$here/loops_b.sass --fun NoLoop"; do
  # shellcheck disable=SC2086
  python3 "$1" $args >"$tmp" 2>&1
  rc=$?
  sed "s|$here/||" "$tmp"
  echo "exit $rc"
done
