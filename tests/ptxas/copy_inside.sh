#!/usr/bin/env bash
# copy_inside.sh FILE.ptx: per entry of kernels/copy_inside.tls (compiled
# with --specialize k_size=4096,4000), its cp.async instructions with a
# bounds predicate (ignore-src) and without. The generic entries and the
# loop that moves its own variable test every chunk; an entry with k fixed
# tests only A's rows (m is a run-time value) in its main loop (unrolled
# four times there: auto_unroll with a constant trip count, twice in the
# generic entries), and every chunk in the remainder copies after it; B's
# tiles (k rows, 4096 columns, blockIdx.y below a grid of 32) untested.
# k = 4000 with block_k 64 is not a multiple: its last tile crosses k,
# which only the remainder copy reaches. Then the bounds tests of
# everything (setp.lt of a coordinate; setp.gt of a store's remaining
# extent, emit_spread.c's store_inside): the copies' and store_global's, whose column test of C
# goes in every entry (C has 4096 columns and blockIdx.y < 32), and the
# tests proved true (mov.pred 1): CopyMovedOffset's store of a [64, 32]
# tile at [0, 0] into a [64, 32] tensor, none tested. RowPerBlock (blocks =
# [rows]) copies, loads and stores row blockIdx.x of [rows, 128] tensors
# with no row test: its bounds tests are z's (rows + 1 rows, cols columns).
# Last, the distinct tests of a variable against a constant (a tile's
# offset tested once per copy, emit_offset_below): CopyScaledOffsets
# specialised on k = 4096 has one, whatever its three copies. And the
# stores of register tiles at an immediate offset from one address (a
# global tensor whose row length is a constant: C's 4096 columns in every
# entry, emit_spread.c's plan_origin), as nvcc makes of Tilus's epilogue.
# CopyInside__64's pipeline leaves room for C's tile in shared memory, so
# its result goes there and out in 16-byte vectors (ir/stage.c): fewer
# stores, each with its tests, than the 32-column entries' pair stores.
awk '/^\.visible \.entry/ { name = $3; sub(/\($/, "", name); order[++n] = name }
     /cp\.async\.c[ag]/ { if ($0 ~ /, %p[0-9]+;$/) tested[name]++; else untested[name]++ }
     /setp\.lt\.(and\.)?u32 |setp\.gt\.s32 / { bounds[name]++ }
     /mov\.pred %p[0-9]+, 1;/ { proved[name]++ }
     /st\.global.*\[%rd[0-9]+\+[0-9]+\]/ { fromone[name]++ }
     /setp\.lt\.u32 %p[0-9]+, %v[0-9]+, [0-9]+;/ {
       key = name " " $3 " " $4; if (!(key in seen)) { seen[key] = 1; once[name]++ } }
     END { for (i = 1; i <= n; i++) printf "%s: %d tested, %d untested; %d bounds tests, %d tests proved true; %d offset tests; %d stores at immediates\n", order[i], tested[order[i]], untested[order[i]], bounds[order[i]], proved[order[i]], once[order[i]], fromone[order[i]] }' "$1"
