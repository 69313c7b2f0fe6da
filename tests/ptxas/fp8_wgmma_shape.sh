#!/usr/bin/env bash
# fp8_wgmma_shape.sh FILE.ptx: the fp8 WGMMA instructions of
# kernels/wgmma_fp8.tls, their descriptors' high words and the tensor maps
# (golden):
#   m64n64k32.f32.e4m3.e4m3   2 fragments x 4 k32 steps (128-byte rows)
#   m64n32k32.f16.e4m3.e5m2   2 k32 steps (64-byte rows), f16 accumulator
#   m64n16k32.f32.e5m2.e5m2   1 k32 step (32-byte rows)
# each with two scale immediates and no transpose ones (fp8 is K-major
# only); descriptor high words 0x40000040 (128-byte swizzle, 8-row stride
# 1024 bytes), 0x80000020 (64, 512), 0xC0000010 (32, 256); tensor maps of
# fp8 elements (1 byte, strides in bytes).
f=$1
grep -oE 'wgmma\.mma_async[^ ]* .*, %ptrue[^;]*;' "$f" | sed -E 's/ \{[^}]*\}, %rd[0-9]+, %rd[0-9]+,/ {acc}, descA, descB,/' | sort | uniq -c
grep -oE 'mov\.b64 %rd[0-9]+, \{%r[0-9]+, 0x[0-9A-F]+\}' "$f" | sed -E 's/.*(0x[0-9A-F]+).*/desc hi \1/' | sort | uniq -c
grep '^//@tls tmap' "$f"
