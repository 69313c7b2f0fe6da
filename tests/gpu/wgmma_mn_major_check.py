#!/usr/bin/env python3
"""Runs tests/ptxas/kernels/wgmma_mn_major.tls (compiled by tlsc) on the
GPU and checks its four WGMMA products, each with an operand whose M or N
dimension is contiguous (the transpose bits), against torch in float64:

    c1 = a1 @ b1          b1 [K, N], 128-byte swizzle
    c2 = a2^T @ b2^T      a2 [K, M], b2 [N, K]
    c3 = a3 @ b3          A in registers, b3 [K, N], 64-byte swizzle
    c4 = a4 @ b4          bfloat16, b4 [K, N], 32-byte swizzle

    python3 tests/gpu/wgmma_mn_major_check.py --lib build/runtime/libtlsrt.so \\
        --ptx wgmma_mn_major.ptx

Fresh random inputs each round, at m = 64 and a ragged m = 48, outputs
poisoned (NaN) first; relative error ||c - ref|| / ||ref|| below 1e-3 and
no NaN in the m rows (float32 accumulation of 16-bit products). Exits 3
without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1 when a
check fails.
"""
import sys

from gpu_check import setup

torch = None  # imported by setup(), skipping without it


def main():
    global torch
    torch, o, mod = setup("wgmma_mn_major_check", 2)
    ok = True
    for rnd in range(o.rounds):
        for m in (64, 48):
            torch.manual_seed(rnd * 100 + m)

            def rand(rows, cols, dt=torch.float16):
                return (torch.rand(rows, cols, device="cuda") * 2 - 1).to(dt)

            a1, b1 = rand(m, 64), rand(64, 64)
            a2, b2 = rand(64, m), rand(64, 64)
            a3, b3 = rand(m, 64), rand(64, 32)
            a4, b4 = rand(m, 32, torch.bfloat16), rand(32, 16, torch.bfloat16)
            cs = [torch.full((m, n), float("nan"), device="cuda") for n in (64, 64, 32, 16)]
            mod.WgmmaMnMajor(m, a1, b1, a2, b2, a3, b3, a4, b4, *cs)
            torch.cuda.synchronize()
            refs = (a1.double() @ b1.double(), a2.double().t() @ b2.double().t(),
                    a3.double() @ b3.double(), a4.double() @ b4.double())
            for name, c, ref in zip(("c1", "c2", "c3", "c4"), cs, refs):
                got = c.double()
                err = ((got - ref).norm() / ref.norm()).item()
                bad = not torch.isfinite(got).all().item() or not err < 1e-3
                print(f"round {rnd} m={m} {name}: rel_err {err:.3e} {'FAIL' if bad else 'PASS'}")
                ok = ok and not bad
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
