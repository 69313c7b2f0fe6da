#!/usr/bin/env bash
# lowp_shape.sh FILE.ptx: the low-precision instructions of
# kernels/lowp_types.tls, one count per line, for a golden comparison.
# The body is emitted twice (aligned vectors and not), and a global access
# whose alignment is not kernel-wide has its own vector and scalar paths.
#   cvt to fp8      f32 pairs, one cvt.rn.satfinite per two elements
#   cvt from fp8    pairs, one cvt.rn.f16x2 per two elements
#   16-byte fp8     the [8, 256] copy: one ld/st.global.v4.b32 of 16 fp8
#   8-byte fp8      the tiles in the float16 tile's layout (8 elements)
#   bytes           element by element at ragged edges: ld.global.s8/u8,
#                   st.global.s8/u8
#   bfe             vector words unpacked (signed for int8)
set -eu
f=$1
count() { printf '%s %s\n' "$1" "$(grep -cE -- "$2" "$f" || true)"; }
count cvt_to_e4m3 'cvt[.]rn[.]satfinite[.]e4m3x2[.]f32'
count cvt_to_e5m2 'cvt[.]rn[.]satfinite[.]e5m2x2[.]f32'
count cvt_from_e4m3 'cvt[.]rn[.]f16x2[.]e4m3x2'
count cvt_from_e5m2 'cvt[.]rn[.]f16x2[.]e5m2x2'
count ld_global_v4 'ld[.]global([.]nc)?[.]v4[.]b32'
count st_global_v4 'st[.]global[.]v4[.]b32'
count st_global_v2 'st[.]global[.]v2[.]b32'
count st_shared_v2 'st[.]shared[.]v2[.]b32'
count ld_shared_v2 'ld[.]shared[.]v2[.]b32'
count ld_global_s8 'ld[.]global([.]nc)?[.]s8'
count ld_global_u8 'ld[.]global([.]nc)?[.]u8'
count st_global_s8 'st[.]global[.]s8'
count st_global_u8 'st[.]global[.]u8'
count bfe_s32 'bfe[.]s32'
count prmt 'prmt[.]b32'
