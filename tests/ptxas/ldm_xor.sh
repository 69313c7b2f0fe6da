#!/usr/bin/env bash
# ldm_xor.sh FILE.ptx: kernels/ldm_xor.tls, mma_pipeline.tls with its
# accumulator halved at every k step: a loop that computes in registers
# besides its dot, as attention's does. There an ldmatrix address that is
# another's xor a constant, exactly for every thread (emit_spread.c,
# xor_exact: the other k step of A, the other 16-column groups of B), is
# made so, one instruction from one register per operand, which ptxas can
# repeat rather than hold; mma_pipeline.tls's K loop, which only copies and
# multiplies, keeps a register for each (ptx_mma_shape). Then whether
# ptxas -v reports a spill.
set -eu
f=$1
echo "ldmatrix x4: $(grep -cE 'ldmatrix\.sync\.aligned\.m8n8\.x4(\.trans)?\.shared\.b16' "$f")"
. "$(dirname "$0")/ldm_counts.sh"
echo "ldmatrix address registers: $(ldm_address_registers)"
echo "ldmatrix addresses by xor: $(by_xor 'ldmatrix')"
"${PTXAS:-ptxas}" -arch=sm_90a -v "$f" -o /dev/null 2>&1 |
  awk '/spill stores/ { print ($5 == 0 ? "no spill" : "spills") }'
