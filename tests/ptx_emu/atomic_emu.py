#!/usr/bin/env python3
"""atomic_emu.py PTX: runs tests/gpu/kernels/atomic.tls (compiled to PTX) on
the CPU with ptxemu, as tests/gpu/atomic_check.py does on the GPU: the
self.atomic group with four blocks adding into the same destinations
(int32 and float32 add, max, sub, an add whose old values are kept), a
histogram by global_scatter_add and shared_scatter_add (indices outside
the bins skipped), and shared cas and exch with their old values. The
interpreter runs the blocks and threads one after another, an order the
GPU may take: integers are checked exactly, the float sum by relative
error, the counter's old values as each block's index. Exits 1 on a
difference.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

BAD = []


def report(name, good):
    print(f"{name}: {'PASS' if good else 'FAIL'}")
    if not good:
        BAD.append(name)


def ints(data):
    return [v for (v,) in struct.iter_unpack("<i", bytes(data))]


def floats(data):
    return [v for (v,) in struct.iter_unpack("<f", bytes(data))]


def pack(fmt, values):
    return b"".join(struct.pack("<" + fmt, v) for v in values)


def check_global(mod, rng):
    n = 8 * 32
    x = [rng.randrange(-1000, 1000) for _ in range(4 * n)]
    f = [struct.unpack("<f", struct.pack("<f", rng.gauss(0, 1)))[0] for _ in range(4 * n)]
    a = [rng.randrange(-5, 5) for _ in range(n)]
    fa = [struct.unpack("<f", struct.pack("<f", rng.gauss(0, 1)))[0] for _ in range(n)]
    m = [rng.randrange(-2000, 2000) for _ in range(n)]
    s = [rng.randrange(-5, 5) for _ in range(n)]
    mem = ptxemu.Memory()
    bufs = [mem.alloc(pack("i", x)), mem.alloc(pack("f", f)), mem.alloc(pack("i", a)),
            mem.alloc(pack("f", fa)), mem.alloc(pack("i", m)), mem.alloc(pack("i", s)),
            mem.alloc(bytes(4 * n)), mem.alloc(pack("i", [-99] * 4 * n))]
    mod.run("AtomicGlobal", 4, 128, bufs, mem)
    col = [[x[b * n + i] for b in range(4)] for i in range(n)]
    report("global_add int32", ints(mem.data(bufs[2])) == [a[i] + sum(col[i]) for i in range(n)])
    want = [fa[i] + sum(f[b * n + i] for b in range(4)) for i in range(n)]
    got = floats(mem.data(bufs[3]))
    err = (sum((g - w) ** 2 for g, w in zip(got, want)) / sum(w * w for w in want)) ** 0.5
    report(f"global_add float32 (rel_err {err:.1e})", err < 1e-6)
    report("global_max int32", ints(mem.data(bufs[4])) == [max(m[i], *col[i]) for i in range(n)])
    report("global_sub int32 (release)",
           ints(mem.data(bufs[5])) == [s[i] - sum(col[i]) for i in range(n)])
    report("global_add counter", ints(mem.data(bufs[6])) == [4] * n)
    report("old values of the counter", ints(mem.data(bufs[7])) == [b for b in range(4) for _ in range(n)])


def check_scatter(mod, rng):
    i = [rng.randrange(-4, 68) for _ in range(4 * 16 * 32)]
    mem = ptxemu.Memory()
    bufs = [mem.alloc(pack("i", i)), mem.alloc(bytes(4 * 16 * 64)),
            mem.alloc(pack("i", [-1] * 4 * 16 * 64))]
    mod.run("AtomicScatter", 4, 128, bufs, mem)
    ref = [0] * (4 * 16 * 64)
    for b in range(4):
        for r in range(16):
            for c in range(32):
                idx = i[(b * 16 + r) * 32 + c]
                if 0 <= idx < 64:
                    ref[(b * 16 + r) * 64 + idx] += 1
    total = [sum(ref[b * 1024 + k] for b in range(4)) for k in range(1024)]
    report("global_scatter_add histogram", ints(mem.data(bufs[1])) == total)
    report("shared_scatter_add histograms", ints(mem.data(bufs[2])) == ref)


def check_cas(mod, rng):
    n = 16 * 32
    init = list(range(n))
    hit = [rng.random() < 0.5 for _ in range(n)]
    c = [init[k] if hit[k] else init[k] + 1 for k in range(n)]
    v = [rng.randrange(-10**6, 10**6) for _ in range(n)]
    mem = ptxemu.Memory()
    bufs = [mem.alloc(pack("i", c)), mem.alloc(pack("i", v)), mem.alloc(pack("i", [7] * 4 * n))]
    mod.run("AtomicCas", 1, 64, bufs, mem)
    o = ints(mem.data(bufs[2]))
    after = [v[k] if hit[k] else init[k] for k in range(n)]
    report("shared_cas old values", o[:n] == init)
    report("shared_cas result", o[n:2 * n] == after)
    report("shared_exch old values", o[2 * n:3 * n] == after)
    report("shared_exch result", o[3 * n:] == init)


def main():
    mod = ptxemu.Module(open(sys.argv[1]).read())
    rng = random.Random(17)
    check_global(mod, rng)
    check_scatter(mod, rng)
    check_cas(mod, rng)
    sys.exit(1 if BAD else 0)


if __name__ == "__main__":
    main()
