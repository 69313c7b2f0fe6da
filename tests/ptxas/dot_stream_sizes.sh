#!/usr/bin/env bash
# dot_stream_sizes.sh FILE.ptx: per entry of tests/gpu/kernels/dot_stream.tls,
# how many of its dots read an operand from shared memory k step by k step
# (backend_ptx/emit_stream.c, its PTX comment; the body is emitted twice).
# Only where the operand is larger than the dot's result: block_k 64 (an
# A or B tile of 64 elements a thread against a result of 32) streams,
# block_k 16 and 32 read their operands whole.
awk '/^\.visible \.entry/ { name = $3; sub(/\($/, "", name); order[++n] = name }
     /\/\/ dot of line [0-9]+: .*k step by k step/ { s[name]++ }
     END { for (i = 1; i <= n; i++) printf "%s: %d streamed\n", order[i], s[order[i]] }' "$1"
