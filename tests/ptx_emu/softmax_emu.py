#!/usr/bin/env python3
"""softmax_emu.py PTX: runs examples/softmax.tls (compiled to PTX: the
online softmax, a running max and rescaled sum per column position, then
the rows' max and sum across lanes and warps) on the CPU with ptxemu, for
entries of one and of four rows a block, at 5 x 700 (a partial last row
block, a ragged last tile) with one row of -inf but one entry and one
mostly -inf, against float64 by relative error per row (exp is approximate
on the GPU); outputs poisoned first. Exits 1 on a difference.
"""
import math
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

M, N = 5, 700
ENTRIES = ("OnlineSoftmax__1_256_4", "OnlineSoftmax__4_256_8", "OnlineSoftmax__4_1024_4")


def main():
    text = open(sys.argv[1]).read()
    mod = ptxemu.Module(text)
    rng = random.Random(19)
    x = [[ptxemu.f16_value(ptxemu.f16_bits(rng.gauss(0, 3))) for _ in range(N)] for _ in range(M)]
    x[1] = [-math.inf] * N
    x[1][333] = 2.0
    x[3] = [-math.inf if j % 7 else v for j, v in enumerate(x[3])]
    ref = []
    for row in x:
        top = max(row)
        e = [math.exp(v - top) for v in row]
        s = math.fsum(e)
        ref.append([v / s for v in e])
    bad = 0
    for entry in ENTRIES:
        bm = int(entry.split("__")[1].split("_")[0])
        threads = int(re.search(rf"//@tls entry {entry} .*block=(\d+)", text).group(1))
        mem = ptxemu.Memory()
        px = mem.alloc(b"".join(ptxemu.f16_bits(v).to_bytes(2, "little") for r in x for v in r))
        py = mem.alloc(b"\xff" * 2 * M * N)
        mod.run(entry, (M + bm - 1) // bm, threads, [M, N, px, py], mem)
        data = mem.data(py)
        worst = 0.0
        for i in range(M):
            got = [ptxemu.f16_value(int.from_bytes(data[2 * (i * N + j):2 * (i * N + j) + 2],
                                                   "little")) for j in range(N)]
            err = math.sqrt(math.fsum((g - r) ** 2 for g, r in zip(got, ref[i])) /
                            math.fsum(r * r for r in ref[i])) if all(g == g for g in got) \
                else math.inf
            worst = max(worst, err)
        ok = worst < 1e-3  # the float16 output's rounding
        print(f"{entry} {M}x{N}: worst row rel_err {worst:.2e} {'PASS' if ok else 'FAIL'}")
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
