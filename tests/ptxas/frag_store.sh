#!/usr/bin/env bash
# frag_store.sh FILE.ptx: per entry of examples/matmul_v1.tls (compiled
# with --specialize n_size=4096,4001), the stores of its WGMMA fragment:
# 4-byte pair stores and 2-byte element stores. Where the row length and
# the column offset are even (n fixed at 4096, offset_n a multiple of 256)
# a pair is stored whole or not at all: 64 pair stores and no element
# store. The generic entry and n = 4001 test the alignment at run time,
# once for the fragment, and branch to one of two copies of the stores:
# 64 pair stores, or 64 pair and 128 element stores under predicates (an
# odd row length or column offset).
awk '/^\.visible \.entry/ { name = $3; sub(/\($/, "", name); order[++n] = name }
     /st\.global\.b32/ { pairs[name]++ }
     /st\.global\.b16/ { elems[name]++ }
     END { for (i = 1; i <= n; i++) printf "%s: %d pair stores, %d element stores\n", order[i], pairs[order[i]], elems[order[i]] }' "$1"
