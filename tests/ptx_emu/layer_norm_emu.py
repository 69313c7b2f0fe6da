#!/usr/bin/env python3
"""layer_norm_emu.py PTX: runs tests/gpu/kernels/layer_norm.tls (compiled
to PTX: y = (x - mean) / sqrt(var + eps) * gamma + beta, the variance about
the mean, reductions across lanes and warps, [m, 1] and [n] broadcasting,
rsqrt, where) on the CPU with ptxemu, at a ragged row length (1000: the
last tile partial for both block widths) and rows whose mean is far from
zero, against float64 by relative error (rsqrt is approximate on the GPU);
every entry, outputs poisoned first. Exits 1 on a difference.
"""
import math
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

M, N, EPS = 3, 1000, 1e-5


def f16(v):
    return ptxemu.f16_value(ptxemu.f16_bits(v))


def main():
    text = open(sys.argv[1]).read()
    mod = ptxemu.Module(text)
    rng = random.Random(17)
    x = [[f16(rng.gauss(100.0 * r, 2.5)) for _ in range(N)] for r in range(M)]
    gamma = [f16(rng.uniform(0.5, 1.5)) for _ in range(N)]
    beta = [f16(rng.gauss(0, 1)) for _ in range(N)]
    ref = []
    for row in x:
        mean = math.fsum(row) / N
        var = math.fsum((v - mean) ** 2 for v in row) / N
        ref += [(v - mean) / math.sqrt(var + EPS) * g + b for v, g, b in zip(row, gamma, beta)]
    bad = 0
    for entry in re.findall(r"\.visible \.entry (CenteredLayerNorm\w*)\(", text):
        threads = int(re.search(rf"//@tls entry {entry} .*block=(\d+)", text).group(1))
        mem = ptxemu.Memory()
        halves = lambda vals: b"".join(ptxemu.f16_bits(v).to_bytes(2, "little") for v in vals)  # noqa: E731
        px = mem.alloc(halves(v for row in x for v in row))
        pg, pb = mem.alloc(halves(gamma)), mem.alloc(halves(beta))
        py = mem.alloc(b"\xff" * 2 * M * N)
        mod.run(entry, M, threads, [M, N, px, pg, pb, py, EPS], mem)
        data = mem.data(py)
        got = [ptxemu.f16_value(int.from_bytes(data[2 * i:2 * i + 2], "little"))
               for i in range(M * N)]
        err = math.sqrt(math.fsum((g - r) ** 2 for g, r in zip(got, ref)) /
                        math.fsum(r * r for r in ref)) if all(g == g for g in got) else math.inf
        ok = err < 1e-3  # the float16 output's rounding: 2e-4
        print(f"{entry} {M}x{N}: rel_err {err:.2e} {'PASS' if ok else 'FAIL'}")
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
