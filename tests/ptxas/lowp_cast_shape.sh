#!/usr/bin/env bash
# lowp_cast_shape.sh FILE.ptx: per entry of tests/gpu/kernels/lowp_cast.tls,
# how its small integers and sub-byte floats become 16-bit floats and how
# it computes with them. None needs a cvt but int8 and uint8 to bfloat16:
#   integers of up to 8 bits (7 for bfloat16): a prmt packing two
#     registers ("pair prmts", which float pairs use too), a lop3 ("masked
#     pairs", which nibble pairs use too) and a sub.{f16,bf16}x2 per pair;
#   4-bit integers from bytes to float16: a prmt of one byte into both
#     halves ("nibble pairs"), a lop3 and a sub.f16x2 per byte, the word
#     never shifted ("shifts by 4" counts shr by 4);
#   int8 and uint8 from a loaded word to float16: a prmt and a sub.f16x2
#     per two bytes ("byte pairs");
#   sub-byte floats to float16: a shl, a shr, an and, a lop3 and (bias not
#     15) a mul.f16x2 per pair ("float pairs");
#   unsigned integers and floats of up to 3 bits to float16 (every value's
#     low byte 0): a shl, a mad and one prmt of a table of the values' high
#     bytes per pair ("table pairs").
# The element-wise arithmetic runs in pairs (x2); vector stores are .v2 or
# .v4, never .v3 (ptxas refuses it).
awk '
  function flush() {
    if (name != "") printf "%s: cvt %d, pair prmts %d, masked pairs %d, nibble pairs %d, byte pairs %d, float pairs %d, table pairs %d, shifts by 4 %d, x2 ops %d, scalar half ops %d, v3 %d\n", name, cvt, magic, masked, nib, bytep, fltp, tblp, shr4, x2, scalar, v3
  }
  /^\.visible \.entry/ { flush(); name = $3; sub(/\(.*/, "", name); cvt = magic = masked = nib = bytep = fltp = tblp = shr4 = x2 = scalar = v3 = 0 }
  /cvt\.rn\.b?f16\.[su]32/ { cvt++ }
  /prmt\.b32 .*, 0x5410;/ { magic++ }
  /lop3\.b32 .*, 0x6A;/ { masked++ }
  /prmt\.b32 [^,]+, [^,]+, 0, 0x/ { nib++ }
  /shr\.[us]32 .*, 4;/ { shr4++ }
  /prmt\.b32 .*, 0x4[0-3]4[0-3];/ { bytep++ }
  /lop3\.b32 .*, 0xEA;/ { fltp++ }
  /mad\.lo\.u32 .*, 4096, /{ tblp++ }
  /(mul|sub|add)\.(rn\.)?b?f16x2/ { x2++ }
  /(mul|sub|add)\.(rn\.)?b?f16 / { scalar++ }
  /\.v3\./ { v3++ }
  END { flush() }
' "$1"
