#!/usr/bin/env bash
# float_div.sh FILE.ptx: the float divisions of kernels/float_div.tls, one
# count per instruction, for a golden comparison: float32 division of
# scalars and of tensors is div.full.f32 (Tilus's nvcc -prec-div=false),
# float64 div.rn.f64.
set -eu
grep -oE '\bdiv[.](rn|full|approx)[.a-z0-9]*' "$1" | sort | uniq -c | awk '{print $2, $1}'
