#!/usr/bin/env python3
"""scan_emu.py PTX: runs tests/gpu/kernels/scan.tls (compiled to PTX) on
the CPU with ptxemu, as tests/gpu/scan_check.py does on the GPU: scan,
cumsum and cumprod along slots, lanes and warps, inclusive and exclusive,
of float32, int32 and float16 tiles. The values make every result exact
whatever order the kernel combines in (small integers for the sums, +-1,
2 and 1/2 for the products, any float for max and min, any int32 for the
bitwise scans and the wrapping sum), so each is checked bit for bit
against Python's prefix; outputs poisoned first. Exits 1 on a difference.
"""
import os
import random
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

M32 = 0xFFFFFFFF


def f32(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def words(vals, fmt="<f"):
    return b"".join(struct.pack(fmt, v) for v in vals)


def prefix(rows, op, dim, exclusive=False, identity=None):
    """The prefix of a list of rows along dim (0: down columns, 1: along
    rows), op a function of two values; exclusive shifts by one."""
    n, m = len(rows), len(rows[0])
    out = [[None] * m for _ in range(n)]
    for i in range(n):
        for j in range(m):
            prev = (out[i][j - 1] if j else None) if dim == 1 else (out[i - 1][j] if i else None)
            out[i][j] = rows[i][j] if prev is None else op(prev, rows[i][j])
    if exclusive:
        shifted = [[identity] * m for _ in range(n)]
        for i in range(n):
            for j in range(m):
                if dim == 1 and j + 1 < m:
                    shifted[i][j + 1] = out[i][j]
                if dim == 0 and i + 1 < n:
                    shifted[i + 1][j] = out[i][j]
        out = shifted
    return [v for row in out for v in row]


def run(mod, text, entry, args, mem):
    threads = int(re.search(rf"//@tls entry {entry} .*block=(\d+)", text).group(1))
    mod.run(entry, 1, threads, args, mem)


def main():
    text = open(sys.argv[1]).read()
    mod = ptxemu.Module(text)
    rng = random.Random(13)
    bad = 0

    x = [[float(rng.randint(-9, 9)) for _ in range(128)] for _ in range(32)]
    x[2][5] = -0.0
    fx = [[rng.uniform(-4, 4) for _ in range(128)] for _ in range(32)]  # for max/min
    p = [[rng.choice((1.0, -1.0, 2.0, 0.5)) for _ in range(128)] for _ in range(32)]
    mem = ptxemu.Memory()
    px, pp = mem.alloc(words(v for r in x for v in r)), mem.alloc(words(v for r in p for v in r))
    py = mem.alloc(b"\xff" * 4 * 6 * 32 * 128)
    run(mod, text, "ScanFloat", [px, pp, py], mem)
    add, mul = (lambda a, b: a + b), (lambda a, b: a * b)
    refs = prefix(x, add, 1) + prefix(x, add, 0) + prefix(x, add, 1, True, 0.0) + \
        prefix(p, mul, 1) + prefix(x, max, 0) + prefix(x, min, 1, True, float("inf"))
    # zeros by value: the sign of an exclusive sum's first zero (the kernel
    # starts from -0.0, the identity of +) and of min(0.0, -0.0) are the
    # kernel's, and torch's check compares them by value too
    bad += ptxemu.differ(mem, [("ScanFloat: cumsum 1, cumsum 0, exclusive cumsum, cumprod, "
                                "max 0, exclusive min 1", py, [f32(v) for v in refs])],
                         canon=lambda w: 0 if w == 0x80000000 else w)
    mem = ptxemu.Memory()  # max and min of arbitrary floats: the same values selected
    px = mem.alloc(words(v for r in fx for v in r))
    pp, py = mem.alloc(words(v for r in p for v in r)), mem.alloc(b"\xff" * 4 * 6 * 32 * 128)
    run(mod, text, "ScanFloat", [px, pp, py], mem)
    fx32 = [[struct.unpack("<f", struct.pack("<f", v))[0] for v in r] for r in fx]
    data = mem.data(py)
    got = [int.from_bytes(data[4 * i:4 * i + 4], "little") for i in range(6 * 4096)]
    want = [f32(v) for v in prefix(fx32, max, 0) + prefix(fx32, min, 1, True, float("inf"))]
    wrong = sum(g != w for g, w in zip(got[4 * 4096:], want))
    print(f"ScanFloat: max 0, exclusive min 1 of arbitrary floats: {wrong} of {len(want)} "
          f"differ {'FAIL' if wrong else 'PASS'}")
    bad += wrong

    xi = [[rng.randint(-2**31, 2**31 - 1) for _ in range(128)] for _ in range(16)]
    xi[3] = [-1] * 128
    mem = ptxemu.Memory()
    px, py = mem.alloc(words((v for r in xi for v in r), "<i")), mem.alloc(b"\xff" * 4 * 4 * 2048)
    run(mod, text, "ScanInt", [px, py], mem)
    u = [[v & M32 for v in r] for r in xi]
    refs = prefix(u, lambda a, b: a ^ b, 1) + prefix(u, lambda a, b: a & b, 0) + \
        prefix(u, lambda a, b: a | b, 1) + prefix(u, lambda a, b: (a + b) & M32, 1, True, 0)
    bad += ptxemu.differ(mem, [("ScanInt: xor 1, and 0, or 1, exclusive wrapping cumsum 1", py,
                                refs)])

    xr = [float(rng.randint(0, 1)) for _ in range(2048)]
    mem = ptxemu.Memory()
    px = mem.alloc(b"".join(ptxemu.f16_bits(v).to_bytes(2, "little") for v in xr))
    py = mem.alloc(b"\xff" * 2 * 2048)
    run(mod, text, "ScanRow", [px, py], mem)
    bad += ptxemu.differ(mem, [("ScanRow: float16 cumsum over 8 warps", py,
                                [ptxemu.f16_bits(v) for v in prefix([xr], add, 1)])], width=2)

    xw = [[float(rng.randint(-9, 9)) for _ in range(8)] for _ in range(32)]
    mem = ptxemu.Memory()
    px, py, pz = mem.alloc(words(v for r in xw for v in r)), mem.alloc(b"\xff" * 4 * 256), \
        mem.alloc(b"\xff" * 4 * 256)
    run(mod, text, "ScanWarp", [px, py, pz], mem)
    t = [list(c) for c in zip(*xw)]
    bad += ptxemu.differ(mem, [("ScanWarp: cumsum 0", py, [f32(v) for v in prefix(xw, add, 0)]),
                               ("ScanWarp: transpose, cumsum 1", pz,
                                [f32(v) for v in prefix(t, add, 1)])])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
