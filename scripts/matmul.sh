#!/usr/bin/env bash
# matmul.sh: the main job. Builds tlsc, compiles examples/matmul_v5.tls to
# PTX, assembles it with ptxas -arch=sm_90a -v, and where a GPU is present
# runs it against cuBLAS (check + benchmark) with tlsrun.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
mkdir -p out
build/driver/tlsc examples/matmul_v5.tls -o out/matmul_v5.ptx
echo "tlsc: wrote out/matmul_v5.ptx"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [ -x "$ptxas" ]; then
  "$ptxas" -arch=sm_90a -v out/matmul_v5.ptx -o out/matmul_v5.cubin
else
  echo "ptxas not found: skipping assembly"
fi
if build/tools/tlsrun/tlsrun --probe >/dev/null 2>&1; then
  for size in "8192 8192 8192" "4096 4096 4096" "1000 1016 1032"; do
    set -- $size
    build/tools/tlsrun/tlsrun out/matmul_v5.ptx --kernel MatmulWGMMAV5 -m "$1" -n "$2" -k "$3" --check --bench
  done
else
  echo "no GPU here: skipping the run against cuBLAS (tlsrun --probe)"
fi
