#!/usr/bin/env bash
# bench_ladder.sh BUILD_DIR OUT_DIR: the Hopper ladder of docs/tutorial.md
# on the GPU. Compiles every example with BUILD_DIR's tlsc into OUT_DIR,
# checks each with tlsrun --check at a size that is a multiple of its tile
# and one that is not, then times each matmul step at 8192^3 beside cuBLAS
# (tlsrun --bench) and the TMA copy at 8192x8192. Every command and its
# output go to stdout; the exit status counts the commands that failed.
set -u
build=${1:?usage: bench_ladder.sh BUILD_DIR OUT_DIR}
out=${2:?usage: bench_ladder.sh BUILD_DIR OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tlsc=$build/driver/tlsc
tlsrun=$build/tools/tlsrun/tlsrun
steps="matmul_v1 matmul_v2 matmul_v3 matmul_v4 matmul_v5"
failed=0
mkdir -p "$out"

# Runs one command, echoing it first; counts a failure.
step() {
  echo "\$ $*"
  "$@" || { echo "FAILED (exit $?): $*"; failed=$((failed + 1)); }
}

for tls in "$here"/*.tls; do
  step "$tlsc" "$tls" -o "$out/$(basename "$tls" .tls).ptx"
done

echo "== checks"
"$tlsrun" --probe
step "$tlsrun" "$out/vector_add.ptx" -n 1000003 --check
step "$tlsrun" "$out/vector_add.ptx" -n 1048576 --check
step "$tlsrun" "$out/tma_copy.ptx" -m 4096 -n 4096 --check
step "$tlsrun" "$out/tma_copy.ptx" -m 1000 -n 1016 --check
for s in $steps; do
  step "$tlsrun" "$out/$s.ptx" --sizes 2048x2048x2048,1000x1016x1032 --check
done

echo "== bench at 8192^3"
for s in $steps; do
  step "$tlsrun" "$out/$s.ptx" -m 8192 -n 8192 -k 8192 --check --bench
done
step "$tlsrun" "$out/tma_copy.ptx" -m 8192 -n 8192 --bench
echo "== $failed command(s) failed"
exit $((failed > 0))
