#!/usr/bin/env bash
# big_pitch.sh FILE.ptx: kernels/big_pitch.tls's global accesses: how many
# take their step past 2^31 bytes as a 64-bit add (add.s64 ..., 4294967296)
# and the largest immediate offset an address has (it must fit 32 bits).
awk '/add\.s64 %rd[0-9]+, %rd[0-9]+, 4294967296;/ { adds++ }
     /(ld|st)\.global/ { if (match($0, /\+[0-9]+\]/)) { v = substr($0, RSTART + 1, RLENGTH - 2) + 0; if (v > max) max = v } }
     END { printf "64-bit adds of 4 GB: %d; largest immediate offset: %d\n", adds, max }' "$1"
