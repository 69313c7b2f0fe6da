#!/usr/bin/env python3
"""copy_strength_emu.py PTX: runs tests/gpu/kernels/copy_strength.tls
(compiled to PTX) on the CPU with ptxemu, as tests/gpu/copy_strength_check.py
does on the GPU: copy_async in pipelined, unrolled loops whose addresses
the backend strength-reduces (2-D, a division, a 3-D view, and a copy that
is not affine), each block summing the tiles it copied, at ragged m and
trip counts that are and are not multiples of the unroll factor; and the
copy whose offset is assigned inside an `if`. Small integers in float16,
so every float32 sum is exact; outputs poisoned (NaN) first. Exits 1 on a
difference.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

NAN = 0x7FC00000


def ints(rng, n):
    return [rng.randint(-8, 8) for _ in range(n)]


def f16s(vals):
    return b"".join(ptxemu.f16_bits(float(v)).to_bytes(2, "little") for v in vals)


def f32_words(vals):
    return [struct.unpack("<I", struct.pack("<f", float(v)))[0] for v in vals]


def strength_refs(a, b, c, s, m, k_size):
    """The four outputs of CopyStrength: A's [m, 32] tile sums over the
    trips' columns, and per block B's rows k // 16 (+1), C's likewise and
    S's row k // 128 (rows past the end count zero)."""
    trips = range(0, k_size, 32)
    blocks = (m + 63) // 64
    ref_a = [sum(a[i * 1024 + t + j] for t in trips if t + j < 1024) for i in range(m)
             for j in range(32)]

    def rows(src, nrows, width, first_rows):
        out = [0] * (nrows * width)
        for r0 in first_rows:
            for r in range(nrows):
                if r0 + r < len(src) // width:
                    for j in range(width):
                        out[r * width + j] += src[(r0 + r) * width + j]
        return out

    ref_b = rows(b, 2, 64, [t // 16 for t in trips]) * blocks
    ref_c = rows(c, 2, 64, [t // 16 for t in trips]) * blocks  # [2, 2, 32] rows of 64
    ref_s = rows(s, 1, 64, [t // 128 for t in trips]) * blocks
    return ref_a, ref_b, ref_c, ref_s


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    rng = random.Random(11)
    bad = 0
    # trips: 3 and 32 (2 stages), 3, 2 and 5 (3 stages): multiples of the
    # unroll factor and not
    for entry, m, k_size in (("CopyStrength__2", 130, 96), ("CopyStrength__2", 64, 1000),
                             ("CopyStrength__3", 130, 96), ("CopyStrength__3", 1, 64),
                             ("CopyStrength__3", 64, 160)):
        a, b, c, s = ints(rng, m * 1024), ints(rng, 64 * 64), ints(rng, 64 * 64), \
            ints(rng, 8 * 64)
        blocks = (m + 63) // 64
        mem = ptxemu.Memory()
        ins = [mem.alloc(f16s(x)) for x in (a, b, c, s)]
        sizes = (m * 32, blocks * 128, blocks * 128, blocks * 64)
        outs = [mem.alloc(NAN.to_bytes(4, "little") * n) for n in sizes]
        mod.run(entry, blocks, 128, [m, k_size, *ins, *outs], mem)
        refs = strength_refs(a, b, c, s, m, k_size)
        bad += ptxemu.differ(mem, [(f"{entry} m={m} k_size={k_size} {name}", addr,
                                    f32_words(ref))
                                   for name, addr, ref in zip("ABCS", outs, refs)])
    for k_size, flip in ((96, 1), (1000, 1), (96, 0)):
        a = ints(rng, 64 * 1024)
        mem = ptxemu.Memory()
        pa, out = mem.alloc(f16s(a)), mem.alloc(NAN.to_bytes(4, "little") * 64 * 32)
        mod.run("CopyOffsetInIf", 1, 128, [k_size, flip, pa, out], mem)
        starts = [k_size - 32 - t if flip == 1 else t for t in range(0, k_size, 32)]
        ref = [sum(a[i * 1024 + s0 + j] for s0 in starts if 0 <= s0 + j < 1024)
               for i in range(64) for j in range(32)]
        bad += ptxemu.differ(mem, [(f"CopyOffsetInIf k_size={k_size} flip={flip}", out,
                                    f32_words(ref))])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
