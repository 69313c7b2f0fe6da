#!/usr/bin/env python3
"""any_all_emu.py PTX: runs tests/gpu/kernels/any_all.tls (compiled to PTX)
on the CPU with ptxemu, as tests/gpu/any_all_check.py does on the GPU: per
row of a float32 [m, 64] tensor, any(x != 0) and all(x > 0), through the
kernel's warp shuffles. Rows hit every case: all zeros (some -0.0), one
non-zero element, a NaN alone, all positive, all positive but one zero; a
ragged m, outputs poisoned first. Exits 1 when an output differs.
"""
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

M = 77


def rows(rng):
    x = []
    for i in range(M):
        row = [rng.random() + 0.5 for _ in range(64)]
        col, kind = rng.randrange(64), i % 5
        if kind in (0, 1, 2):
            row = [-0.0 if c % 3 == 0 else 0.0 for c in range(64)]
        if kind == 1:
            row[col] = -2.5
        if kind == 2:
            row[col] = math.nan
        if kind == 4:
            row[col] = 0.0
        x.append(row)
    return x


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    x = rows(random.Random(5))
    mem = ptxemu.Memory()
    src = mem.alloc(b"".join(struct.pack("<f", v) for row in x for v in row))
    out = mem.alloc(b"\xff" * 8 * M)
    mod.run("AnyAll", (M + 7) // 8, 128, [M, src, out], mem)
    got = struct.unpack(f"<{2 * M}i", bytes(mem.data(out)))
    ref = []
    for row in x:  # NaN != 0 is true, NaN > 0 false, as in Python
        ref += [int(any(v != 0 for v in row)), int(all(v > 0 for v in row))]
    wrong = [i for i in range(2 * M) if got[i] != ref[i]]
    print(f"{len(wrong)} of {2 * M} differ" +
          (f", e.g. row {wrong[0] // 2} {'any all'.split()[wrong[0] % 2]}: {got[wrong[0]]}"
           f" for {ref[wrong[0]]}" if wrong else "") + (" FAIL" if wrong else " PASS"))
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
