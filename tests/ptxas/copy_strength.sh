#!/usr/bin/env bash
# copy_strength.sh FILE.ptx: per entry of tests/gpu/kernels/copy_strength.tls,
# its strength-reduced copy addresses (backend_ptx/emit_cpasync.c, iv_plan):
# the registers that advance by a constant at the loop's step (add.s64 of a
# register to itself), and its cp.async instructions whose global address
# is such a register (or another) plus an immediate, of all of them.
# CopyStrength's main loop advances A's, B's and C's addresses (S's offset
# k // 128 is not affine: k is a multiple of 32 only) and its unrolled
# copies read them at immediates; CopyOffsetInIf's offset is assigned
# inside an `if`, so nothing there is strength-reduced.
awk '/^\.visible \.entry/ { name = $3; sub(/\($/, "", name); order[++n] = name }
     /^\tadd\.s64 %rd[0-9]+, %rd[0-9]+, [0-9]+;$/ { split($2, d, ","); split($3, s, ",")
       if (d[1] == s[1]) ivs[name]++ }
     /cp\.async\.c[ag]/ { all[name]++; if ($0 ~ /\], \[%rd[0-9]+\+[0-9]+\]/) imm[name]++ }
     END { for (i = 1; i <= n; i++)
             printf "%s: %d advancing addresses; %d of %d cp.async at an immediate\n",
                    order[i], ivs[order[i]], imm[order[i]], all[order[i]] }' "$1"
