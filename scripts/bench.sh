#!/usr/bin/env bash
# bench.sh [BUILD_DIR]: the benchmark table of docs/performance.md (its
# "Protocol" section), on the GPU
# machine from the repo root with a carried build folder (default build-rt).
# matmul_v5 at 4096^3, 4096x4096x14336, 8192^3 and 10240^3 for num_stages
# 2, 3 and 4 (tlsc -D num_stages=N: a value outside the autotune list
# replaces it), each against cuBLAS in the same process:
# L2 flushed before each run, CUDA events, median of --reps runs (default 30).
# Writes $OUT/bench.log (default out/gpu).
set -u
build=${1:-build-rt}
out=${OUT:-out/gpu}
reps=${REPS:-30}
mkdir -p "$out"
log=$out/bench.log
: >"$log"
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
if [ -n "$src" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
tlsc=$build/driver/tlsc tlsrun=$build/tools/tlsrun/tlsrun
sizes=4096x4096x4096,4096x4096x14336,8192x8192x8192,10240x10240x10240
"$tlsrun" --probe >>"$log" 2>&1 || { echo "no GPU" | tee -a "$log"; exit 3; }
fails=0
for stages in 2 3 4; do
  ptx=$out/matmul_v5_s$stages.ptx
  echo "== num_stages=$stages" | tee -a "$log"
  if ! "$tlsc" -D num_stages=$stages examples/matmul_v5.tls -o "$ptx" >>"$log" 2>&1; then
    echo "tlsc -D num_stages=$stages failed" | tee -a "$log"
    fails=$((fails + 1))
    continue
  fi
  timeout 300 "$tlsrun" "$ptx" --sizes "$sizes" --bench --reps "$reps" 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" = 0 ] || fails=$((fails + 1))
  rm -f "$ptx"
done
exit "$fails"
