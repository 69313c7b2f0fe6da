#!/usr/bin/env python3
"""reshape_shared_emu.py PTX: runs the ReshapeShared entry of
tests/gpu/kernels/reshape_shared.tls (compiled to PTX) on the CPU with
ptxemu, as tests/gpu/reshape_shared_check.py does on the GPU: a [16, 64]
float32 tile in shared memory read back through its reshapes to
[4, 4, 64] (view 2), [32, 32], [8, 128] (a reshape of a reshape,
doubled in place) and [4, 128] (the reshape of the view [1] of its
[2, 8, 64] reshape), bit for bit, outputs poisoned first. Exits 1 on a
difference. (ReshapeTma needs TMA, which the interpreter lacks: the GPU
test runs it.)
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402


def f32(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    rng = random.Random(5)
    vals = [rng.uniform(-4, 4) for _ in range(16 * 64)]  # row-major [16, 64]
    mem = ptxemu.Memory()
    src = mem.alloc(b"".join(struct.pack("<f", v) for v in vals))
    outs = [mem.alloc(b"\xff" * 4 * n) for n in (4 * 64, 32 * 32, 16 * 64, 4 * 128)]
    mod.run("ReshapeShared", 1, 128, [src, *outs], mem)
    refs = (
        ("[4, 4, 64] view 2", [f32(v) for v in vals[512:768]]),
        ("[32, 32]", [f32(v) for v in vals]),
        ("[8, 128] doubled in place", [f32(2 * struct.unpack("<f", struct.pack("<f", v))[0])
                                       for v in vals]),
        ("[2, 8, 64][1] as [4, 128]", [f32(v) for v in vals[512:1024]]),
    )
    bad = ptxemu.differ(mem, [(name, addr, ref) for (name, ref), addr in zip(refs, outs)])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
