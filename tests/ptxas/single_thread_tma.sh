#!/usr/bin/env bash
# single_thread_tma.sh FILE.ptx: how matmul_v1's single_thread() region is
# emitted, register numbers masked. Its body issues TMA copies, so it is
# branched around (elect.sync, then @!p bra) and the arrive and the copies
# inside run unpredicated: under a predicate ptxas would compute the copies'
# tensor-map addresses in every warp and move them to uniform registers on
# each trip. A body of arrives alone stays predicated (ptx_v5_shape). The
# last eight branches are the epilogue's: the staged store of
# each 64-column chunk picks its 16-byte vectors or, for a misaligned row,
# its elements (a branch to that copy, and one over it).
set -eu
grep -E 'elect[.]sync|bra([.]uni)? [$]L|mbarrier[.]arrive|cp[.]async[.]bulk[.]tensor' "$1" |
  sed -E 's/%(p|r|v|tmap)[0-9]+/%\1N/g; s/[$]L[0-9]+/$LN/g; s/^[[:space:]]+//' |
  cut -d' ' -f1-3 | uniq -c | awk '{$1=$1; print}'
