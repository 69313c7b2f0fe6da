#!/usr/bin/env bash
# fragment_add.sh FILE.ptx: per entry of kernels/fragment_add.tls, the
# loads of the partial sum into the fragment (a [64, 64] fragment is 8
# column octets x 2 rows a thread: 16 pair loads where the row length and
# the column offset are even, and a second copy for odd ones, 16 pair
# loads each with its two element loads; a branch picks the copy) and the arithmetic on it: float16 fragments in
# packed f16x2 pairs (16 registers: 16 of each operation), float32 ones per
# element (32). A subtraction from a scalar has the scalar (a %r or %f
# register) first and the fragment (a %t register) last. The per_block
# entries keep their workspace in the fragment's order: 16-byte vector
# stores and loads of four registers (float16: 16 registers, 4 each;
# float32: 32, 8 each), no pair or element access.
set -eu
awk '/^\.visible \.entry/ { name = $3; sub(/\(.*/, "", name) }
     /ld\.global\.(b32|b16|v2\.f32|f32) / { n[name " " $2]++ }
     /(ld|st)\.global\.v4\.(b32|f32) / { op = $1 ~ /^@/ ? $2 : $1; n[name " " op]++ }
     /(add|max)\.(rn\.)?f(16x2|32) / { n[name " " $1]++ }
     /sub\.(rn\.)?f(16x2|32) [^,]*, %[rf][0-9]+, %t/ { n[name " " $1 " scalar-first"]++ }
     END { for (k in n) print k, n[k] }' "$1" | sort
