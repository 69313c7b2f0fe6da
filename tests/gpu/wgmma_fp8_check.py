#!/usr/bin/env python3
"""Runs tests/ptxas/kernels/wgmma_fp8.tls (compiled by tlsc) on the GPU and
checks its three fp8 WGMMA products against torch in float64:

    c1 (f32) = a1 (e4m3) . b1^T (e4m3)   128-byte swizzle, K = 128
    c2 (f16) = a2 (e4m3) . b2^T (e5m2)   64-byte swizzle, K = 64, f16 acc
    c3 (f32) = a3 (e5m2) . b3^T (e5m2)   32-byte swizzle, K = 32

    python3 tests/gpu/wgmma_fp8_check.py --lib build/runtime/libtlsrt.so \
        --ptx wgmma_fp8.ptx

Fresh random inputs each of --rounds rounds, outputs poisoned (NaN) first,
relative error ||c - ref|| / ||ref|| (below 1e-3 for f32, 1e-2 for the f16
accumulator, no NaN). Exits 3 without torch or a GPU (a skip under
tests/gpu/run_or_skip.sh), 1 when a check fails.
"""
import sys

from gpu_check import setup

torch = None  # imported by setup(), skipping without it


def main():
    global torch
    torch, o, mod = setup("wgmma_fp8_check", 3)
    e4, e5 = torch.float8_e4m3fn, torch.float8_e5m2
    m = 128
    ok = True
    for rnd in range(o.rounds):
        torch.manual_seed(rnd)

        def rand(rows, cols, dt):
            return (torch.rand(rows, cols, device="cuda") * 4 - 2).to(dt)

        a1, b1 = rand(m, 128, e4), rand(64, 128, e4)
        a2, b2 = rand(m, 64, e4), rand(32, 64, e5)
        a3, b3 = rand(m, 32, e5), rand(16, 32, e5)
        c1 = torch.full((m, 64), float("nan"), device="cuda")
        c2 = torch.full((m, 32), float("nan"), device="cuda", dtype=torch.float16)
        c3 = torch.full((m, 16), float("nan"), device="cuda")
        mod.WgmmaFp8(m, a1, b1, a2, b2, a3, b3, c1, c2, c3)
        torch.cuda.synchronize()
        # the kernel computes the first 128 rows of c1 and 64 of c2, c3
        for name, c, a, b, rows, tol in (("c1", c1, a1, b1, 128, 1e-3),
                                         ("c2", c2, a2, b2, 64, 1e-2),
                                         ("c3", c3, a3, b3, 64, 1e-3)):
            ref = a[:rows].double() @ b.double().t()
            got = c[:rows].double()
            err = ((got - ref).norm() / ref.norm()).item()
            bad = not torch.isfinite(got).all().item() or not err < tol
            print(f"round {rnd} {name}: {a.dtype} x {b.dtype} -> {c.dtype}: rel_err {err:.3e}"
                  f" {'FAIL' if bad else 'PASS'}")
            ok = ok and not bad
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
