#!/usr/bin/env bash
# dot_stream_rules.sh FILE.ptx FILE.ir: for kernels/dot_stream_rules.tls,
# the dots whose operands the backend reads from shared memory k step by
# k step (its PTX comment, by line; each body of the kernel once), the
# ldmatrix / mma.sync sequence of the first body, run-length coded, and
# the IR's dots (with an accumulator where an addition became one).
ptx=$1 ir=$2
grep -oE '// dot of line [0-9]+: .*' "$ptx" | sort -u
awk '/^\tret;/ { exit } { print }' "$ptx" | grep -oE '^\s*(ldmatrix|mma\.sync)' | tr -d '\t ' |
  uniq -c | awk '{printf "%s x%s\n", $2, $1}'
grep -E '= dot\(' "$ir" | sed -E 's/^ +//'
