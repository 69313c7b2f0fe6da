#!/usr/bin/env bash
# group_chain.sh FILE.ptx: the tests, branches and labels around the thread
# groups of kernels/group_chain.tls, labels renamed in order of appearance
# (L0, L1, ...): each group's guard, and the jump that ends every group of
# a chain but its last.
set -eu
grep -E 'setp[.](lt|ge)[.]u32 %p[0-9]+, %(warp|tidx)|bra(\.uni)? |^\$L[0-9]+:' "$1" |
  sed -E 's/^[[:space:]]+//; s/%p[0-9]+/%p/g' |
  awk '{ line = $0
         while (match(line, /\$L[0-9]+/)) {
           l = substr(line, RSTART, RLENGTH)
           if (!(l in name)) name[l] = "L" n++
           out = out substr(line, 1, RSTART - 1) name[l]
           line = substr(line, RSTART + RLENGTH)
         }
         print out line; out = "" }'
