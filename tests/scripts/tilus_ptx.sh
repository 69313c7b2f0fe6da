#!/bin/sh
# tilus_ptx.sh SCRIPTS TLSC TLSRUN: scripts/tilus_ptx.py on the stand-in
# for a Tilus program here (tilus_like.cu) against tlsc's entry of
# tilus_like.tls specialised on `scale`: the file tlsrun reads (its
# parameters the entry's, `scale` unused since Tilus compiled it in) and
# ptxas assembles; then the refusals: the generic entry (the parameters do
# not line up) and a program with two kernels. Exits 77 (skipped) without
# nvcc or ptxas.
scripts=$1 tlsc=$2 tlsrun=$3
here=$(dirname "$0")
PATH=$PATH:/usr/local/cuda/bin
command -v nvcc >/dev/null && command -v ptxas >/dev/null || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tlsc" "$here/tilus_like.tls" --specialize scale=3 -o "$tmp/like.ptx" || exit 1
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like.ptx" \
  --entry Scale__scale_3 -o "$tmp/tilus.ptx" | sed "s|$tmp/||"
"$tlsrun" "$tmp/tilus.ptx" --list
ptxas -arch=sm_90a "$tmp/tilus.ptx" -o "$tmp/tilus.cubin" && echo "ptxas: ok"
python3 "$scripts/tilus_ptx.py" --cu "$here/tilus_like.cu" --like "$tmp/like.ptx" \
  --entry Scale -o "$tmp/generic.ptx" 2>&1
echo "exit $?"
cp "$here/tilus_like.cu" "$tmp/two.cu"
cat >>"$tmp/two.cu" <<'CU'
static __global__ void __launch_bounds__(128) other_kernel(int32_t n) {
}
CU
python3 "$scripts/tilus_ptx.py" --cu "$tmp/two.cu" --like "$tmp/like.ptx" \
  --entry Scale__scale_3 -o "$tmp/two.ptx" 2>&1
echo "exit $?"
