#!/usr/bin/env python3
"""scatter_emu.py PTX: runs tests/gpu/kernels/scatter.tls (compiled to PTX)
on the CPU with ptxemu, as tests/gpu/scatter_check.py does on the GPU:
store_global_scatter of float32 columns and float16 rows, and
store_shared_scatter of int32 rows, with distinct indices per line and
some outside the destination (negative, past its end), which must store
nothing: checked exactly against a scatter in Python, and any store
outside the buffers is an error of the interpreter. Exits 1 on a
difference.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402


def distinct_indices(rng, lines, count, extent, outside):
    """lines x count indices, distinct in each line, `outside` of them
    replaced by values outside [0, extent)."""
    idx = [rng.sample(range(extent), count) for _ in range(lines)]
    for line in idx:
        for k in rng.sample(range(count), outside):
            line[k] = -1 - k if k % 2 else extent + k
    return idx


def transpose(m):
    return [list(r) for r in zip(*m)]


def scatter(dst, dim, idx, values):
    """dst (a list of rows) with values[r][c] at (idx[r][c], c) for dim 0,
    (r, idx[r][c]) for dim 1, where the index is inside."""
    out = [row[:] for row in dst]
    for r, row in enumerate(values):
        for c, v in enumerate(row):
            k = idx[r][c]
            if dim == 1 and 0 <= k < len(out[0]):
                out[r][k] = v
            if dim == 0 and 0 <= k < len(out):
                out[k][c] = v
    return out


def pack(fmt, rows):
    return b"".join(struct.pack("<" + fmt, v) for row in rows for v in row)


def unpack(fmt, data, cols):
    flat = [v for (v,) in struct.iter_unpack("<" + fmt, bytes(data))]
    return [flat[i:i + cols] for i in range(0, len(flat), cols)]


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    rng = random.Random(13)
    bad = 0

    def report(name, got, want):
        nonlocal bad
        same = got == want
        print(f"{name}: {'PASS' if same else 'FAIL'}")
        bad += not same

    f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]  # noqa: E731
    x = [[f32(rng.gauss(0, 1)) for _ in range(64)] for _ in range(16)]
    i = distinct_indices(rng, 16, 64, 256, 5)
    h = [[ptxemu.f16_value(ptxemu.f16_bits(rng.gauss(0, 1))) for _ in range(8)] for _ in range(32)]
    j = transpose(distinct_indices(rng, 8, 32, 100, 3))  # distinct down each column
    mem = ptxemu.Memory()
    y0, z0 = [[-9.0] * 256 for _ in range(16)], [[7.0] * 8 for _ in range(100)]
    bufs = [mem.alloc(pack("f", x)), mem.alloc(pack("i", i)), mem.alloc(pack("f", y0)),
            mem.alloc(pack("e", h)), mem.alloc(pack("i", j)), mem.alloc(pack("e", z0))]
    mod.run("ScatterGlobal", 1, 128, bufs, mem)
    report("global scatter along dim 1 (float32)", unpack("f", mem.data(bufs[2]), 256),
           scatter(y0, 1, i, x))
    report("global scatter along dim 0 (float16)", unpack("e", mem.data(bufs[5]), 8),
           scatter(z0, 0, j, h))

    v = [[rng.randrange(-1000, 1000) for _ in range(16)] for _ in range(32)]
    k = transpose(distinct_indices(rng, 16, 32, 64, 4))
    mem = ptxemu.Memory()
    bufs = [mem.alloc(pack("i", v)), mem.alloc(pack("i", k)), mem.alloc(b"\xff" * 4 * 64 * 16)]
    mod.run("ScatterShared", 1, 64, bufs, mem)
    report("shared scatter along dim 0 (int32)", unpack("i", mem.data(bufs[2]), 16),
           scatter([[-7] * 16 for _ in range(64)], 0, k, v))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
