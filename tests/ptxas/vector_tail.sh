#!/usr/bin/env bash
# vector_tail.sh FILE.ptx: kernels/vecadd.tls accesses a rank-1 tensor of
# n elements 4 at a time in the body's aligned copy; a vector whose first
# element is in bounds ends in bounds only when n is a multiple of 4, so
# the predicate choosing that copy tests n % 4 beside each pointer's
# alignment (one line per access per entry; ptx_gpu_kernels runs it with
# n = 100003 and a guard region after c).
f=$1
echo "pointer alignment tests: $(grep -cE 'and\.b64 %rd[0-9]+, %arg[123], 7;' "$f")"
echo "length tests (n % 4): $(grep -cE 'and\.b32 %r[0-9]+, %arg0, 3;' "$f")"
