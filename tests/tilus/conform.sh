#!/usr/bin/env bash
# conform.sh TLSC EXAMPLES REL EXPECTED: compiles the Tilus example file
# EXAMPLES/REL, as shipped, with tlsc and compares the outcome with the
# one line of EXPECTED: `ok` when it compiles, or its first diagnostic line
# (the path shown relative to EXAMPLES). Prints both lines when they differ.
# EXPECTED with .args for .out, when present, holds the options a user
# passes for that file (the values Tilus's host code gives __init__:
# -D dtype=float16 -D head_size=128 ...).
set -u
tlsc=$1 examples=$2 rel=$3 expected=$4
err=$(mktemp)
trap 'rm -f "$err"' EXIT
args=()
[ -f "${expected%.out}.args" ] && read -r -a args <"${expected%.out}.args"
(cd "$examples" && "$tlsc" "${args[@]}" "$rel" -o /dev/null) 2>"$err"
rc=$?
if [ $rc = 0 ]; then got=ok; else got=$(head -1 "$err"); fi
if [ ! -f "$expected" ]; then
  echo "conform: $rel: no expectation; it gives:"
  echo "$got"
  exit 1
fi
want=$(head -1 "$expected")
if [ "$got" != "$want" ]; then
  echo "conform: $rel"
  echo "  expected: $want"
  echo "  got:      $got"
  [ $rc = 0 ] || sed 's/^/  | /' "$err" | head -20
  exit 1
fi
