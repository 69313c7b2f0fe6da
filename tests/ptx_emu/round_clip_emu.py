#!/usr/bin/env python3
"""round_clip_emu.py PTX: runs tests/gpu/kernels/round_clip.tls (compiled
to PTX) on the CPU with ptxemu, as tests/gpu/round_clip_check.py does on the
GPU: y = clip(round(x), lo, hi) = max(min(round(x), hi), lo), rounding to
the nearest integer with ties to even, for float32 with run-time bounds
(also lo > hi, where lo wins), float16 with -3.3 and 5.7 rounded to
float16, and int32 with -7 and int32(2.7) = 2. A ragged n (3 blocks, the
last partial), ties among the values, outputs poisoned first; every
element compared exactly. Exits 1 when one differs.
"""
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

N = 300


def rint(x):
    return math.copysign(float(round(x)), x)


def clip(x, lo, hi):
    return max(min(x, hi), lo)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    rng = random.Random(11)
    xf = [f32((rng.random() - 0.5) * 40) for _ in range(N)]
    xf[::7] = [rng.randrange(-20, 20) + 0.5 for _ in xf[::7]]  # ties
    xh = [ptxemu.f16_value(ptxemu.f16_bits((rng.random() - 0.5) * 16)) for _ in range(N)]
    xh[::5] = [rng.randrange(-8, 8) + 0.5 for _ in xh[::5]]
    xi = [rng.randrange(-20, 20) for _ in range(N)]
    h_lo, h_hi = (ptxemu.f16_value(ptxemu.f16_bits(v)) for v in (-3.3, 5.7))
    bad = 0
    for lo, hi in ((-6.25, 9.5), (3.0, -2.0)):
        mem = ptxemu.Memory()
        bufs = [mem.alloc(b"".join(struct.pack("<f", v) for v in xf)), mem.alloc(b"\xff" * 4 * N),
                mem.alloc(b"".join(struct.pack("<e", v) for v in xh)), mem.alloc(b"\xff" * 2 * N),
                mem.alloc(b"".join(struct.pack("<i", v) for v in xi)), mem.alloc(b"\xff" * 4 * N)]
        args = [N, ptxemu.f32_bits(lo), ptxemu.f32_bits(hi), *bufs]
        mod.run("RoundClip", (N + 127) // 128, 128, args, mem)
        out_f = struct.unpack(f"<{N}f", bytes(mem.data(bufs[1])))
        out_h = struct.unpack(f"<{N}e", bytes(mem.data(bufs[3])))
        out_i = struct.unpack(f"<{N}i", bytes(mem.data(bufs[5])))
        checks = (("float32", out_f, [clip(rint(x), lo, hi) for x in xf]),
                  ("float16", out_h, [clip(rint(x), h_lo, h_hi) for x in xh]),
                  ("int32", out_i, [clip(x, -7, 2) for x in xi]))
        for name, got, ref in checks:
            wrong = [i for i in range(N) if got[i] != ref[i]]
            print(f"lo={lo} hi={hi} {name}: {len(wrong)} of {N} differ"
                  + (f", e.g. element {wrong[0]}: {got[wrong[0]]} for {ref[wrong[0]]}" if wrong else ""))
            bad += len(wrong)
    print("PASS" if not bad else "FAIL")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
