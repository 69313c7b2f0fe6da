#!/usr/bin/env bash
# readonly_nc.sh FILE.ptx: the global loads and stores of
# kernels/readonly_nc.tls, one count per kind, for a golden comparison.
# The body is emitted twice (vectors, and element by element at one address
# per run of elements): x's tile and x[0, 0].item() are ld.global.nc
# (x is never written), state's tile and item plain ld.global (it is
# written in place), out only stored.
set -eu
grep -oE '(ld|st)[.]global[.a-z0-9]*' "$1" | sort | uniq -c | awk '{print $2, $1}'
