#!/usr/bin/env bash
# tilus_sass.sh OUT KIND PTX CLASS TILUS_FILE[:init] SIZE [LIB]
#
# Side by side, for one script: the machine code tlsc and Tilus make of it
# (issue 15: "diff the SASS of both"). On the GPU machine, with torch and
# Tilus's wheels on PYTHONPATH (docs/performance.md says how):
#   1. scripts/kernels_check.py checks tlsc's PTX against torch at SIZE and
#      times its fastest entry against Tilus compiling TILUS_FILE, Tilus's
#      cache in a fresh folder so that it holds this file's programs only;
#   2. OUT/tlsc.sass and OUT/tlsc_regs.txt: the fastest entry's SASS and
#      register use (ptxas -e assembles that entry alone: a specialised file
#      of 144 entries took ptxas minutes);
#   3. OUT/tilus.tgz (one file, however many programs) holding tilus/<program>.cu
#      and .sass, each program Tilus built (its generated CUDA and SASS),
#      its dispatch table and latency report (which program its tuning
#      chose, every program's time in its tuning); beside it
#      OUT/tilus_regs.txt, each program's registers, and
#      OUT/tilus_programs.txt, each program's autotune point, latency in
#      Tilus's tuning and whether Tilus chose it (tilus_ptx.py --programs);
#   4. OUT/loops.txt: scripts/sass_loops.py's main loop of tlsc's fastest
#      entry beside each program's, opcode by opcode;
#   5. OUT/tilus_<program>.ptx: each program's code (nvcc -ptx of its device
#      code) under the metadata of tlsc's entry of the program's autotune
#      point, the fastest entry's sibling (scripts/tilus_ptx.py --at), so
#      that kernels_check.py --compare tilus=OUT/tilus_<program>.ptx times
#      Tilus's code through libtlsrt, as tlsc's is launched (where the tool
#      refuses a program, none; tilus_ptx.log says why). The nvcc runs go
#      in parallel, TILUS_PTX_JOBS at a time (8).
# LIB defaults to build-rt/runtime/libtlsrt.so; KC_ARGS, when set, adds
# options to kernels_check.py (say KC_ARGS="--a16wx-dtype int8"); with
# TILUS_CACHE set, Tilus's cache is that folder and stays. Example:
#   scripts/tilus_sass.sh out/v3 matmul_kn v3.ptx MatmulV3 \
#       TILUS/examples/matmul/matmul_v3.py 4096x4096x4096
set -euo pipefail
if [ $# -lt 6 ]; then
  sed -n '2,25p' "$0" >&2
  exit 2
fi
out=$1 kind=$2 ptx=$3 cls=$4 tfile=$5 size=$6 lib=${7:-build-rt/runtime/libtlsrt.so}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/tilus"
# Tilus's cache: TILUS_CACHE when set (kept, so that a later
# kernels_check.py --tilus-cache reuses the programs and the tuning),
# else a fresh folder removed at the end
if [ -n "${TILUS_CACHE:-}" ]; then
  cache=$TILUS_CACHE
  mkdir -p "$cache"
else
  cache=$(mktemp -d)
  trap 'rm -rf "$cache"' EXIT
fi
init=""
case $tfile in *:*) init=:${tfile#*:} tfile=${tfile%%:*} ;; esac
python3 "$here/kernels_check.py" --lib "$lib" --case "$kind:$ptx:$cls" \
  --tilus "$kind:$tfile:$cls$init" --tilus-cache "$cache" --check-sizes "$size" \
  --bench --bench-sizes "$size" --rounds 5 ${KC_ARGS:-} | tee "$out/bench.log"
# the entry that ran: a specialised sibling when kernels_check names one
best=$(sed -n 's/^entry [^[]*\[\([^]]*\)\] runs.*/\1/p' "$out/bench.log" | head -1)
[ -n "$best" ] || best=$(sed -n 's/^bench [^[]*\[\([^]]*\)\].*/\1/p' "$out/bench.log" | head -1)
if [ -n "$best" ]; then
  ptxas -arch=sm_90a -e "$best" "$ptx" -o "$out/tlsc.cubin"
  cuobjdump -res-usage "$out/tlsc.cubin" >"$out/tlsc_regs.txt"
  cuobjdump -sass -fun "$best" "$out/tlsc.cubin" >"$out/tlsc.sass"
fi
# Tilus's tuning first (the loop below runs nvcc per program, and a time
# limit may cut it): which program it chose, every program's latency
find "$cache" -name 'dispatch_table.txt' -exec cp {} "$out/tilus/" \;
find "$cache" -path '*latency*' -name 'report.txt' -exec cp {} "$out/tilus/latency_report.txt" \;
python3 "$here/tilus_ptx.py" --programs "$cache" >"$out/tilus_programs.txt" || true
: >"$out/tilus_regs.txt"
: >"$out/tilus_ptx.log"
njobs=${TILUS_PTX_JOBS:-8}
for prog in "$cache"/programs/*/; do
  name=$(basename "$prog")
  [ -f "$prog/module/lib.so" ] || continue
  cp "$prog/module/source.cu" "$out/tilus/$name.cu" 2>/dev/null || true
  cuobjdump -sass "$prog/module/lib.so" >"$out/tilus/$name.sass"
  echo "$name: $(cuobjdump -res-usage "$prog/module/lib.so" | grep -oE 'REG:[0-9]+ STACK:[0-9]+')" \
    >>"$out/tilus_regs.txt"
  # 5. OUT/tilus_<program>.ptx: the program's own code under the metadata
  #    of tlsc's entry of its point, for kernels_check.py --compare
  if [ -n "$best" ] && [ -f "$out/tilus/$name.cu" ]; then
    point=$(awk -v h="$name" '$1 == h && $5 != "-" { print $5; exit }' "$out/tilus_programs.txt")
    while [ "$(jobs -rp | wc -l)" -ge "$njobs" ]; do sleep 1; done
    (python3 "$here/tilus_ptx.py" --cu "$out/tilus/$name.cu" --like "$ptx" --entry "$best" \
      ${point:+--at "$point"} -o "$out/tilus_$name.ptx" >"$out/tilus/$name.ptx.log" 2>&1 ||
      rm -f "$out/tilus_$name.ptx") &
  fi
done
wait
for log in "$out"/tilus/*.ptx.log; do
  [ -f "$log" ] || continue
  echo "$(basename "$log" .ptx.log): $(tail -1 "$log")" >>"$out/tilus_ptx.log"
  rm -f "$log"
done
# 4. OUT/loops.txt: the main loop of tlsc's fastest entry beside each
#    Tilus program's (scripts/sass_loops.py: opcodes per loop, difference)
: >"$out/loops.txt"
if [ -s "$out/tlsc.sass" ]; then
  for s in "$out"/tilus/*.sass; do
    [ -f "$s" ] || continue
    python3 "$here/sass_loops.py" "$out/tlsc.sass" "$s" >>"$out/loops.txt" 2>&1 || true
    echo >>"$out/loops.txt"
  done
fi
tar czf "$out/tilus.tgz" -C "$out" tilus && rm -rf "$out/tilus"
echo "tlsc's fastest entry: ${best:-none} ($out/tlsc.sass); Tilus's programs: $out/tilus.tgz, $out/tilus_regs.txt; main loops side by side: $out/loops.txt"
