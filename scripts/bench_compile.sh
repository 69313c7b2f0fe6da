#!/usr/bin/env bash
# bench_compile.sh [BUILD_DIR] [RUNS]: the compiler's own speed (issue 6):
# whole-process wall time of `tlsc examples/matmul_v5.tls -o X.ptx` against
# `ptxas -arch=sm_90a` on its output, medians over RUNS runs (default 30 for
# tlsc, 5 for ptxas). CPU timings on this machine.
set -eu
build=${1:-build} runs=${2:-30}
tlsc=$build/driver/tlsc
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median_ms() { # median_ms N COMMAND...: median wall time of N runs, in ms
  local n=$1; shift
  for _ in $(seq "$n"); do
    local t0=$(date +%s%N); "$@" >/dev/null 2>&1; local t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 ))
  done | sort -n | awk -v n="$n" '{ t[NR] = $1 } END { printf "%.2f", t[int((n + 1) / 2)] / 1000 }'
}
"$tlsc" examples/matmul_v5.tls -o "$tmp/v5.ptx"
t_tlsc=$(median_ms "$runs" "$tlsc" examples/matmul_v5.tls -o "$tmp/v5.ptx")
t_ptxas=$(median_ms 5 "$ptxas" -arch=sm_90a "$tmp/v5.ptx" -o "$tmp/v5.cubin")
echo "| step | median ms |"
echo "|---|---|"
echo "| tlsc examples/matmul_v5.tls -o v5.ptx ($runs runs) | $t_tlsc |"
echo "| ptxas -arch=sm_90a v5.ptx (5 runs) | $t_ptxas |"
