#!/usr/bin/env python3
"""Runs tests/gpu/kernels/random.tls (compiled by tlsc) on the GPU: Tilus's
Philox-4x32 generators (randint4x, randint, rand, randn) over offsets
0..1023 with a 64-bit seed, against a host-side Philox-4x32 with Tilus's
constants and conversions: the words and rand exactly, randn by relative
error (it goes through log, sqrt and cos). Outputs poisoned first.

    python3 tests/gpu/random_check.py --lib build/runtime/libtlsrt.so \\
        --ptx random.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
import math
import struct

from gpu_check import run_rounds

M32 = 0xFFFFFFFF


def philox(seed, offset, rounds):
    c = [offset & M32, 0, 0, 0]
    k0, k1 = seed & M32, (seed >> 32) & M32
    for _ in range(rounds):
        hb = (0xCD9E8D57 * c[2]) >> 32
        ha = (0xD2511F53 * c[0]) >> 32
        c = [hb ^ c[1] ^ k0, (0xCD9E8D57 * c[2]) & M32, ha ^ c[3] ^ k1, (0xD2511F53 * c[0]) & M32]
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def uniform(w):
    i = w - (1 << 32) if w >= 1 << 31 else w
    if i < 0:
        i = -i - 1
    return f32(f32(float(i)) * f32(4.6566127342e-10))


def check_round(torch, mod, rnd):
    seed = int(torch.randint(0, 2**62, (1,)).item())
    w = torch.full((6, 1024), 12345, dtype=torch.int32, device="cuda")
    u = torch.full((1024,), float("nan"), device="cuda")
    n = torch.full((1024,), float("nan"), device="cuda")
    mod.Random(seed, w, u, n)
    torch.cuda.synchronize()
    words = [[x & M32 for x in row] for row in w.cpu().tolist()]
    ref = [philox(seed, i, 10) for i in range(1024)]
    ok = True
    for k in range(4):
        good = words[k] == [r[k] for r in ref]
        print(f"round {rnd} randint4x word {k}: {'PASS' if good else 'FAIL'}")
        ok = ok and good
    good = words[4] == [r[0] for r in ref]
    print(f"round {rnd} randint: {'PASS' if good else 'FAIL'}")
    ok = ok and good
    good = words[5] == [philox(seed, i, 7)[0] for i in range(1024)]
    print(f"round {rnd} randint n_rounds=7: {'PASS' if good else 'FAIL'}")
    ok = ok and good
    want_u = [uniform(r[0]) for r in ref]
    good = u.cpu().tolist() == want_u and all(0.0 <= x < 1.0 for x in want_u)
    print(f"round {rnd} rand: {'PASS' if good else 'FAIL'}")
    ok = ok and good
    want_n = []
    for r in ref:
        u1 = max(uniform(r[0]), f32(1.0e-7))
        want_n.append(math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * uniform(r[1])))
    got = n.cpu().double()
    ref_n = torch.tensor(want_n, dtype=torch.float64)
    err = ((got - ref_n).norm() / ref_n.norm()).item()
    good = err < 1e-5
    print(f"round {rnd} randn: {'PASS' if good else 'FAIL'} rel_err {err:.2e}")
    return ok and good


if __name__ == "__main__":
    run_rounds("random_check", 2, check_round)
