#!/usr/bin/env bash
# lowp_cast_shape.sh FILE.ptx: per entry of tests/gpu/kernels/lowp_cast.tls,
# how its small integers become 16-bit floats and how it computes with
# them. Integers of up to 8 bits (7 for bfloat16) need no cvt: an integer
# add, a prmt and one sub.{f16,bf16}x2 per pair (magic); 4-bit integers to
# float16 a prmt, a lop3 and a sub.f16x2 per byte, both nibbles at once
# and with no shift of the word (nibble pairs; "shifts by 4" counts shr by
# 4); the others (int8 and uint8 to bfloat16) one cvt each. The
# element-wise arithmetic runs in pairs (x2); vector stores are .v2 or
# .v4, never .v3 (ptxas refuses it).
awk '
  function flush() {
    if (name != "") printf "%s: cvt %d, magic pairs %d, nibble pairs %d, shifts by 4 %d, other x2 ops %d, scalar half ops %d, v3 %d\n", name, cvt, magic, nib, shr4, x2 - magic, scalar, v3
  }
  /^\.visible \.entry/ { flush(); name = $3; sub(/\(.*/, "", name); cvt = magic = nib = shr4 = x2 = scalar = v3 = 0 }
  /cvt\.rn\.b?f16\.[su]32/ { cvt++ }
  /prmt\.b32 .*, 0x5410;/ { magic++ }
  /lop3\.b32 .*, 0x6A;/ { nib++ }
  /shr\.[us]32 .*, 4;/ { shr4++ }
  /(mul|sub|add)\.(rn\.)?b?f16x2/ { x2++ }
  /(mul|sub|add)\.(rn\.)?b?f16 / { scalar++ }
  /\.v3\./ { v3++ }
  END { flush() }
' "$1"
