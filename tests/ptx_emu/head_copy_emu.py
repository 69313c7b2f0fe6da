#!/usr/bin/env python3
"""head_copy_emu.py KERNEL.ptx: runs tests/gpu/kernels/head_copy.tls's
entries (HeadCopy, heads at run time, and HeadCopy__heads_3, specialised)
on the CPU with ptxemu: y[b, s, heads-1-h, :] = 2 x[b, s, h, :] + 1 over
[batch, seqlen, heads, 32] float32 tensors at ragged seqlen, exactly
against Python; y poisoned first and the words after it must stay
untouched. The vector copy of the body runs with y aligned, the scalar
one with x and y one element off. Exits 1 on a difference.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

GUARD = 64  # words after y that no block may write
HEAD, BLOCK_S = 32, 8


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def run(mod, entry, batch, seqlen, heads, skew):
    rng = random.Random(seqlen * 7 + heads + skew)
    n = batch * seqlen * heads * HEAD
    x = [f32(rng.uniform(-8, 8)) for _ in range(n)]
    mem = ptxemu.Memory()
    px = mem.alloc(b"\0" * 4 * skew + b"".join(struct.pack("<f", v) for v in x)) + 4 * skew
    y_buf = mem.alloc(b"\0" * 4 * skew + b"\xff" * 4 * (n + GUARD))
    py = y_buf + 4 * skew
    grid = ((seqlen + BLOCK_S - 1) // BLOCK_S, heads, batch)
    mod.run(entry, grid, 64, [batch, seqlen, heads, px, py], mem)
    ref = [0] * n
    for b in range(batch):
        for s in range(seqlen):
            for h in range(heads):
                src = ((b * seqlen + s) * heads + h) * HEAD
                dst = ((b * seqlen + s) * heads + heads - 1 - h) * HEAD
                for c in range(HEAD):
                    ref[dst + c] = struct.unpack("<I", struct.pack("<f", f32(f32(x[src + c] * 2.0) + 1.0)))[0]
    what = f"{entry} batch={batch} seqlen={seqlen} heads={heads} skew={skew}: y, then {GUARD} guard words"
    return ptxemu.differ(mem, [(what, y_buf, [0] * skew + ref + [0xFFFFFFFF] * GUARD)])


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    bad = 0
    for seqlen, skew in ((13, 0), (16, 1), (5, 0)):
        bad += run(mod, "HeadCopy", 2, seqlen, 2, skew)
        bad += run(mod, "HeadCopy__heads_3", 2, seqlen, 3, skew)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
