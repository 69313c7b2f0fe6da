#!/usr/bin/env bash
# frag_stage.sh FILE.ptx: per entry of tests/ptxas/kernels/frag_stage.tls,
# how its float16 WGMMA fragment is stored into shared memory: stmatrix.x4
# (four 8x8 matrices, 16 bytes a thread) where the fragment's column
# octets pair up (block_n 64 and 128, swizzled for the TMA store or
# row-major), 4-byte pair stores otherwise (block_n 24). The body is
# emitted once: the `load` entries' 16-byte global stores come after the
# kernel's loop, so each tests its own alignment.
awk '/^\.visible \.entry/ { name = $3; sub(/\($/, "", name); order[++n] = name }
     /stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/ { stm[name]++ }
     /st\.shared\.b32/ { pairs[name]++ }
     END { for (i = 1; i <= n; i++) printf "%s: %d stmatrix.x4, %d pair stores\n", order[i], stm[order[i]], pairs[order[i]] }' "$1"
