#!/usr/bin/env bash
# mma_shape.sh FILE.ptx: the instruction profile of kernels/mma_pipeline.tls
# (a cp.async pipeline into shared memory, ldmatrix + mma.sync), one count
# per line, for a golden comparison. The body is emitted twice (aligned and
# not); the K loop is unrolled 3 times with a remainder of up to 2 tested
# copies: 5 copies of the loop body, and 2 + 5 of each copy_async, per body.
#   mma.sync           2 bodies x 5 dots x 64 (128 x 128 x 32 over 4 warps:
#                      4 m-tiles x 8 n-tiles x 2 k-steps) = 640
#   ldmatrix x4        A: 2 x 5 x 8; B (.trans) the same
#   ldmatrix address registers: the lanes' addresses are computed once at
#                      the kernel's start (A: one per k-step, B: one per
#                      16 columns of the warp's 64): the K loop only copies
#                      and multiplies, so it keeps a register for each;
#                      stages and atoms are immediates. The remainder's
#                      copies after the loop make theirs from the first
#                      by xor (emit_spread.c, lane_addr): 2 bodies x 2
#                      copies x (A 8 / 2 + B 8 x 3 / 4) = 40
#   cp.async           2 x 14 copies x 4 chunks, every chunk's bounds one
#                      predicate (ignore-src), no source byte counts; the
#                      aligned body tests no alignment, the other once per
#                      copy (else the element path: 14 ld.global.b16 loops)
#   cp.async shared address registers: one per operand, at the kernel's
#                      start (stages and chunks are immediates)
#   staging tile addresses by xor: the result, staged through a [128, 128]
#                      tile (stage.c) swizzled over its 256-byte rows
#                      (layout.c, smem.c): per body, one register a thread
#                      xor a constant per 16-byte chunk of its fragment
#                      stores (2 x 7)
#   swizzle bfe        A's rows of 64 bytes (bits 7-8), B's and the staging
#                      tile's of 256 (bits 8-10): the hoisted addresses, the
#                      element paths and the staging tile's two bases a body
#   div/rem            none by a constant (emit_divmod.c)
f=$1
count() { grep -cE "$1" "$f"; }
echo "mma.sync m16n8k16: $(count 'mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32')"
echo "ldmatrix x4: $(count 'ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16')"
echo "ldmatrix x4.trans: $(count 'ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16')"
. "$(dirname "$0")/ldm_counts.sh"
echo "ldmatrix address registers: $(ldm_address_registers)"
echo "ldmatrix addresses by xor: $(by_xor 'ldmatrix')"
echo "staging tile addresses by xor: $(by_xor '(st|ld)\.shared')"
echo "cp.async 16, ignore-src: $(count 'cp\.async\.cg\.shared\.global\.L2::256B \[[^]]+\], \[[^]]+\], 16, %p[0-9]+;')"
echo "cp.async 16, source bytes: $(count 'cp\.async\.cg\.shared\.global\.L2::256B \[[^]]+\], \[[^]]+\], 16, %r[0-9]+;')"
echo "cp.async 16: $(count 'cp\.async\.cg\.shared\.global\.L2::256B \[[^]]+\], \[[^]]+\], 16;')"
echo "cp.async shared address registers: $(grep -oE 'cp\.async\.cg[^[]*\[%r[0-9]+' "$f" | sed 's/.*\[//' | sort -u | wc -l)"
echo "ld.global.b16: $(count 'ld\.global\.b16')"
echo "swizzle bfe 7, 2: $(count 'bfe\.u32 %r[0-9]+, %r[0-9]+, 7, 2;')"
echo "swizzle bfe 8, 3: $(count 'bfe\.u32 %r[0-9]+, %r[0-9]+, 8, 3;')"
echo "div/rem by a constant: $(count '(div|rem)\.[su](32|64) [^,]+, [^,]+, -?[0-9]+;')"
