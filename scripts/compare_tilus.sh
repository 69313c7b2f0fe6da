#!/usr/bin/env bash
# compare_tilus.sh TILUS_DIR SIDEBYSIDE OUT [SIDEBYSIDE ARGS...]: on the GPU
# machine, tlsc against Tilus on the same scripts, in one process.
#   TILUS_DIR   a Tilus checkout with python/ and wheels/ (its tvm-ffi build)
#   SIDEBYSIDE  the side-by-side harness (tlsc through libtlsrt, cuBLAS, Tilus)
#   OUT         where the log and the SASS of both compilers' kernels go
# Expects build-rt/runtime/libtlsrt.so (a Release build) and ptx/*.ptx (the
# examples compiled by tlsc). Writes OUT/sidebyside.log, OUT/tilus_*.sass
# (every kernel Tilus compiled) and OUT/tlsc_*.sass (every ptx/*.ptx), and a
# per-opcode count of each SASS (OUT/opcodes.txt) to compare the code.
set -eu
tilus=$1 bench=$2 out=$3
shift 3
mkdir -p "$out" /tmp/site
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$tilus"/wheels/*.whl
export PYTHONPATH=/tmp/site:$tilus/python PYTHONUNBUFFERED=1
rm -rf /tmp/tilus-cache
python3 "$bench" build-rt/runtime/libtlsrt.so ptx "$@" 2>&1 | tee "$out/sidebyside.log"

# The SASS of what each compiler built.
opcodes() { grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+[@!A-Z0-9P_.]*\s*[A-Z][A-Z0-9_.]*' "$1" |
  awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn; }
: >"$out/opcodes.txt"
i=0
while IFS= read -r bin; do
  i=$((i + 1))
  cuobjdump -sass "$bin" >"$out/tilus_$i.sass" 2>/dev/null || continue
  echo "== tilus $i $bin" >>"$out/opcodes.txt"
  opcodes "$out/tilus_$i.sass" >>"$out/opcodes.txt"
done < <(find /tmp/tilus-cache \( -name '*.so' -o -name '*.cubin' \) -type f)
find /tmp/tilus-cache -name '*.cu' -type f -exec cp {} "$out/" \; 2>/dev/null || true
for p in ptx/*.ptx; do
  n=$(basename "$p" .ptx)
  ptxas -arch=sm_90a "$p" -o "/tmp/$n.cubin" && cuobjdump -sass "/tmp/$n.cubin" >"$out/tlsc_$n.sass"
  echo "== tlsc $n" >>"$out/opcodes.txt"
  opcodes "$out/tlsc_$n.sass" >>"$out/opcodes.txt"
done
