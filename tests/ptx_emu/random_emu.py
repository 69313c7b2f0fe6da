#!/usr/bin/env python3
"""random_emu.py PTX: runs tests/gpu/kernels/random.tls (compiled to PTX)
on the CPU with ptxemu, against the host-side Philox-4x32 of
tests/gpu/random_check.py (Tilus's constants and conversions), as that
check does on the GPU: the four words of randint4x, randint, randint with
7 rounds and rand exactly, randn (log, sqrt and cos, approximate on the
GPU and in double here) by relative error; outputs poisoned first, a
64-bit seed. Exits 1 on a difference.
"""
import math
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "gpu"))
import ptxemu  # noqa: E402
from random_check import philox, uniform  # noqa: E402 - the GPU check's reference


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    bad = 0
    for seed in (0x1234_5678_9ABC_DEF,):
        mem = ptxemu.Memory()
        w = mem.alloc(b"\xff" * 4 * 6 * 1024)
        u, n = mem.alloc(b"\xff" * 4096), mem.alloc(b"\xff" * 4096)
        mod.run("Random", 1, 128, [seed, w, u, n], mem)
        ref = [philox(seed, i, 10) for i in range(1024)]
        words = [r[k] for k in range(4) for r in ref] + [r[0] for r in ref] + \
            [philox(seed, i, 7)[0] for i in range(1024)]
        rand = [struct.unpack("<I", struct.pack("<f", uniform(r[0])))[0] for r in ref]
        bad += ptxemu.differ(mem, [(f"seed {seed:#x}: randint4x, randint, randint n_rounds=7", w,
                                    words), (f"seed {seed:#x}: rand", u, rand)])
        data = mem.data(n)
        got = [struct.unpack("<f", data[4 * i:4 * i + 4])[0] for i in range(1024)]
        want = [math.sqrt(-2.0 * math.log(max(uniform(r[0]), 1.0e-7))) *
                math.cos(2 * math.pi * uniform(r[1])) for r in ref]
        err = math.sqrt(sum((g - x) ** 2 for g, x in zip(got, want)) / sum(x * x for x in want))
        ok = err < 1e-5
        print(f"seed {seed:#x}: randn rel_err {err:.2e} {'PASS' if ok else 'FAIL'}")
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
