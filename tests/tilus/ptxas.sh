#!/usr/bin/env bash
# ptxas.sh TLSC PTXAS EXAMPLES REL EXPECTED OUT: compiles the Tilus example
# file EXAMPLES/REL as conform.sh does (EXPECTED's .args, when present, are
# its options) into OUT, then holds OUT to what every tlsc output promises
# (tests/ptxas/ptxas_check.sh): ptxas assembles every entry with no spill,
# no stack frame (printf's buffer aside) and no warning. A file of host
# code alone (no kernel) passes, saying so.
set -u
tlsc=$1 ptxas=$2 examples=$3 rel=$4 expected=$5 out=$6
here=$(dirname "$0")
args=()
[ -f "${expected%.out}.args" ] && read -r -a args <"${expected%.out}.args"
(cd "$examples" && "$tlsc" "${args[@]}" "$rel" -o "$out.tlsc") || exit 1
trap 'rm -f "$out.tlsc"' EXIT
if ! grep -q '^\.visible \.entry' "$out.tlsc"; then
  echo "no kernel in $rel"
  exit 0
fi
stack=()
grep -q 'vprintf' "$out.tlsc" && stack=(--stack-ok)
PTXAS_TIMEOUT=1500 "$here/../ptxas/ptxas_check.sh" "$ptxas" "$out" "${stack[@]}" -- \
  cp "$out.tlsc" "$out"
