#!/bin/sh
# tilus_ptx.sh SCRIPTS TLSC TLSRUN: scripts/tilus_ptx.py on the stand-in
# for a Tilus program here (tilus_like.cu) against tlsc's entry of
# tilus_like.tls specialised on `scale`: the file tlsrun reads (its
# parameters the entry's, `scale` unused since Tilus compiled it in) and
# ptxas assembles; the entry of another autotune point taken to the
# program's own by --at (also from a point with a list value); then the
# refusals: the generic entry (the parameters do not line up), the other
# point's entry (another block), a point with no entry and a program with
# two kernels. Last, --programs on a Tilus cache laid out as Tilus leaves
# it. Exits 77 (skipped) without nvcc or ptxas.
scripts=$1 tlsc=$2 tlsrun=$3
here=$(dirname "$0")
PATH=$PATH:/usr/local/cuda/bin
command -v nvcc >/dev/null && command -v ptxas >/dev/null || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tlsc" "$here/tilus_like.tls" --specialize scale=3 -o "$tmp/like.ptx" || exit 1
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like.ptx" \
  --entry Scale__128__scale_3 -o "$tmp/tilus.ptx" | sed "s|$tmp/||"
"$tlsrun" "$tmp/tilus.ptx" --list
ptxas -arch=sm_90a "$tmp/tilus.ptx" -o "$tmp/tilus.cubin" && echo "ptxas: ok"
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like.ptx" \
  --entry Scale__256__scale_3 --at block=128 -o "$tmp/at.ptx" | sed "s|$tmp/||"
# a point with a list among its values, as Tilus's report writes them
# (keys the entry's config lacks do not decide)
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like.ptx" \
  --entry Scale__256__scale_3 --at "block=128,warp_spatial=[2, 2]" -o "$tmp/at_list.ptx" |
  sed "s|$tmp/||"
# the same from an entry whose config has more than the point (tlsc's
# register variants: registers=occupancy, spelled __occupancy in the name)
awk '/^\/\/@tls entry /{n=$3} /^\/\/@tls end/{for(i=0;i<c;i++)print b[i]}
     {print} /^\/\/@tls/ && !/^\/\/@tls (end|version|source)/{
       l=$0; sub(n, n "__occupancy", l); if (l ~ /config/) l=l " registers=occupancy"; b[c++]=l}' \
  "$tmp/like.ptx" >"$tmp/like_occ.ptx"
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like_occ.ptx" \
  --entry Scale__256__scale_3__occupancy --at block=128 -o "$tmp/at_occ.ptx" | sed "s|$tmp/||"
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like.ptx" \
  --entry Scale__128 -o "$tmp/generic.ptx" 2>&1
echo "exit $?"
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like.ptx" \
  --entry Scale__256__scale_3 -o "$tmp/other.ptx" 2>&1
echo "exit $?"
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like.ptx" \
  --entry Scale__256__scale_3 --at block=512 -o "$tmp/none.ptx" 2>&1
echo "exit $?"
cp "$here/tilus_like.cu" "$tmp/two.cu"
cat >>"$tmp/two.cu" <<'CU'
static __global__ void __launch_bounds__(128) other_kernel(int32_t n) {
}
CU
python3 "$scripts/tilus_ptx.py" --cu "$tmp/two.cu" --like "$tmp/like.ptx" \
  --entry Scale__128__scale_3 -o "$tmp/two.ptx" 2>&1
echo "exit $?"
# a Tilus cache: programs/HASH folders, and per script instance the links
# programs/INDEX, the tuning's report and the dispatch table
c=$tmp/cache inst=$tmp/cache/scripts/scale/3-1a2b3c4d
mkdir -p "$c/programs/aa11" "$c/programs/bb22" "$inst/programs" "$inst/latency/4096"
ln -s ../../../../programs/bb22 "$inst/programs/0"
ln -s ../../../../programs/aa11 "$inst/programs/1"
cat >"$inst/latency/4096/report.txt" <<'TXT'
  index    block  tile        latency (ms)
-------  -------  --------  --------------
      1      128  (16, 8)            0.010
      0      256  (16, 16)           0.012
TXT
echo '{"_metadata": {}, "entries": [[[4096], 1]]}' >"$inst/dispatch_table.json"
python3 "$scripts/tilus_ptx.py" --programs "$c"
