#!/bin/sh
# sass_loops.sh SCRIPT: scripts/sass_loops.py on the fixtures here: two
# files side by side (the inner loop of OuterInner, the loop of Flat), one
# file alone, a function without a loop (exit 1, its message), and one
# whose mbarrier retry stub after EXIT branches back into its loop (the
# loop is 0x30-0x60 with 2 HGMMA, not the stub's jump back, 0x30-0xd0 with 3).
here=$(dirname "$0")
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for args in "$here/loops_a.sass $here/loops_b.sass" "$here/loops_b.sass --fun Flat" \
            "$here/loops_b.sass --fun NoLoop" "$here/loops_b.sass --fun WithStub"; do
  # shellcheck disable=SC2086
  python3 "$1" $args >"$tmp" 2>&1
  rc=$?
  sed "s|$here/||" "$tmp"
  echo "exit $rc"
done
