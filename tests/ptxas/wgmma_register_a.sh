#!/usr/bin/env bash
# wgmma_register_a.sh FILE.ptx: per entry of kernels/wgmma_register_a.tls,
# the wgmma instructions by form and the A registers of each: the register
# form (four packed registers of A, one transpose immediate) for every k16
# step of a [64, 64] A fragment, its registers 4kk .. 4kk+3 in order (k16
# step kk), and no shared-memory descriptor for A. The accumulator type
# follows the autotune point (.f16.f16.f16 or .f32.f16.f16).
set -eu
awk '/^\.visible \.entry/ { name = $3; sub(/\(.*/, "", name) }
     /wgmma\.mma_async/ {
       form = $1
       if (match($0, /\}, \{%t[0-9]+_[0-9]+, %t[0-9]+_[0-9]+, %t[0-9]+_[0-9]+, %t[0-9]+_[0-9]+\}, %rd[0-9]+, %ptrue, 1, 1, 0;/)) {
         a = substr($0, RSTART + 4, RLENGTH)
         sub(/\}.*/, "", a)
         gsub(/%t[0-9]+_/, "", a); gsub(/,/, "", a)
         print name, form, "A registers", a
       } else {
         print name, form, "A from shared memory"
       }
     }' "$1" | sort | uniq -c | sed 's/^ *//'
