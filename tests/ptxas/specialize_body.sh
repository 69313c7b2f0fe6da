#!/usr/bin/env bash
# specialize_body.sh TLSC FILE.tls ENTRY OUT_DIR ARGS... -- DEFINES...: the
# body of ENTRY, built by `tlsc ARGS` (--specialize), is the body of the
# generic entry built with `tlsc DEFINES` (-D), its name aside: a
# specialised entry is exactly what -D makes, with the parameter list kept.
# Prints the instruction count of the generic and the specialised entry.
set -u
tlsc=$1 tls=$2 entry=$3 out=$4
shift 4
spec=() defs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do spec+=("$1"); shift; done
[ $# -gt 0 ] && shift
defs=("$@")
"$tlsc" "$tls" --no-line-info "${spec[@]}" -o "$out/spec.ptx" || exit 1
"$tlsc" "$tls" --no-line-info "${defs[@]}" -o "$out/defs.ptx" || exit 1
generic=$(sed -n 's/^\/\/@tls entry \([A-Za-z0-9_]*\) .*/\1/p' "$out/defs.ptx" | head -1)
# The text of one entry: from its `.entry` line to the closing brace at the
# start of a line, the entry's name replaced by E.
body() { awk -v e="$2" '$0 ~ "\\.entry " e "\\(" {on=1} on {print} on && /^}/ {exit}' "$1" | sed "s/$2/E/g"; }
body "$out/spec.ptx" "$entry" >"$out/spec.body"
body "$out/defs.ptx" "$generic" >"$out/defs.body"
[ -s "$out/spec.body" ] || { echo "FAIL: no entry $entry in the --specialize build"; exit 1; }
if ! diff "$out/defs.body" "$out/spec.body" >"$out/body.diff"; then
  echo "FAIL: $entry differs from the -D build:"; head -40 "$out/body.diff"; exit 1
fi
instructions() { grep -cE '^\s+[a-z@].*;' "$1"; }
body "$out/spec.ptx" "$generic" >"$out/generic.body"
echo "instructions: generic $(instructions "$out/generic.body"), $entry $(instructions "$out/spec.body")"
echo "ok: $entry is the -D build ${defs[*]}"
