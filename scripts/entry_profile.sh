#!/usr/bin/env bash
# entry_profile.sh FILE.ptx [CUOBJDUMP]
#
# What ptxas makes of each entry of a PTX file, without a GPU: a line per
# entry, in the order ptxas compiles them,
#   ENTRY regs=R spill=S loop=I tensor=T
# R registers and S bytes of spill stores (ptxas -arch=sm_90a -v); I the
# instructions of the entry's main loop and T its tensor-core instructions
# (scripts/sass_loops.py over `cuobjdump -sass`), "-" without a loop.
# PTXAS (environment) defaults to ptxas on PATH, CUOBJDUMP to cuobjdump
# there. A CUDA toolkit may come without cuobjdump; NVIDIA's wheel has it
# (`pip download nvidia-cuda-cuobjdump`, then nvidia/cu13/bin/cuobjdump
# from the unzipped wheel). Without it (or with
# CUOBJDUMP "none") the loop fields are left out. Comparing two builds'
# files entry by entry is how docs/performance.md's SASS loop counts were
# taken:
#   scripts/entry_profile.sh old.ptx > old.txt
#   scripts/entry_profile.sh new.ptx > new.txt && paste old.txt new.txt
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '2,18p' "$0" >&2
  exit 2
fi
ptx=$1 dump=${2:-cuobjdump}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${PTXAS:-ptxas}" -arch=sm_90a -v "$ptx" -o "$work/k.cubin" 2>"$work/ptxas.log"
loops=true
if [ "$dump" = none ] || ! command -v "$dump" >/dev/null 2>&1; then loops=false; fi
awk '/Compiling entry function/ { n = $7; gsub("\047", "", n) }
     /spill stores/ { sp = $5 }
     /Used [0-9]+ registers/ { print n, $5, sp }' "$work/ptxas.log" |
  while read -r name regs spill; do
    line="$name regs=$regs spill=$spill"
    if $loops; then
      "$dump" -sass -fun "$name" "$work/k.cubin" >"$work/f.sass" </dev/null
      m=$(python3 "$here/sass_loops.py" "$work/f.sass" 2>/dev/null </dev/null |
        sed -n '1s/.*, \([0-9]*\) instructions (\([0-9]*\) tensor).*/loop=\1 tensor=\2/p' || true)
      line="$line ${m:-loop=- tensor=-}"
    fi
    echo "$line"
  done
