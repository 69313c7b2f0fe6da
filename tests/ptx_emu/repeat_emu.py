#!/usr/bin/env python3
"""repeat_emu.py PTX: runs tests/gpu/kernels/repeat.tls (compiled to PTX)
on the CPU with ptxemu, as tests/gpu/repeat_check.py does on the GPU:
repeat and repeat_interleave of an [8, 16] float32 tile by [2, 3], and of
its row 3 by [2, 2] (a leading dimension added), bit for bit, with -0.0,
NaN and -inf among the values, outputs poisoned first. The kernel moves
elements between threads through shared memory. Exits 1 on a difference.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    rng = random.Random(3)
    x = [[struct.unpack("<I", struct.pack("<f", rng.gauss(0, 1)))[0] for _ in range(16)]
         for _ in range(8)]  # bit patterns
    x[1][2], x[5][7], x[3][0] = 0x80000000, 0x7FC00000, 0xFF800000  # -0.0, NaN, -inf
    mem = ptxemu.Memory()
    src = mem.alloc(b"".join(v.to_bytes(4, "little") for row in x for v in row))
    outs = [mem.alloc(b"\xff" * 4 * n) for n in (16 * 48, 16 * 48, 2 * 32)]
    mod.run("Repeat", 1, 128, [src, *outs], mem)
    refs = (
        ("repeat [2, 3]", [x[i % 8][j % 16] for i in range(16) for j in range(48)]),
        ("repeat_interleave [2, 3]", [x[i // 2][j // 3] for i in range(16) for j in range(48)]),
        ("repeat_interleave [2, 2] of a row", [x[3][j // 2] for _ in range(2) for j in range(32)]),
    )
    bad = ptxemu.differ(mem, [(name, addr, ref) for (name, ref), addr in zip(refs, outs)])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
