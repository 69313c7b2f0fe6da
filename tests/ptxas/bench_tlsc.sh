#!/usr/bin/env bash
# bench_tlsc.sh TLSC [FILE.tls] [RUNS]: wall time of the whole tlsc process
# compiling FILE.tls (default examples/matmul_v5.tls) to PTX, RUNS times
# (default 50); prints the median, min and max in milliseconds. The design
# target is under 10 ms for matmul_v5.
set -eu
tlsc=$1 tls=${2:-examples/matmul_v5.tls} runs=${3:-50}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
times=()
for _ in $(seq "$runs"); do
  t0=$(date +%s%N)
  "$tlsc" "$tls" -o "$out"
  t1=$(date +%s%N)
  times+=($(( (t1 - t0) / 1000 )))
done
printf '%s\n' "${times[@]}" | sort -n | awk -v n="$runs" -v f="$tls" '
  { t[NR] = $1 }
  END { printf "tlsc %s: median %.2f ms (min %.2f, max %.2f) over %d runs\n",
        f, t[int((n + 1) / 2)] / 1000, t[1] / 1000, t[n] / 1000, n }'
