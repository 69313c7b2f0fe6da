#!/usr/bin/env bash
# atomic_shape.sh FILE.ptx: the atomic instructions of
# tests/gpu/kernels/atomic.tls, one count per form: red where nothing reads
# the old values, atom where they are stored, exch and cas (always atom),
# the release qualifier kept, sub as an add of the negation (no atom.sub).
set -eu
grep -oE '\b(red|atom)\.[a-z_]+\.[a-z]+\.(global|shared)\.[a-z]+\.[a-z0-9]+' "$1" | sort | uniq -c |
  awk '{print $2, $1}'
echo "neg: $(grep -cE '^\s*neg\.s32' "$1")"
