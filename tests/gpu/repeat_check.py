#!/usr/bin/env python3
"""Runs tests/gpu/kernels/repeat.tls (compiled by tlsc) on the GPU:
repeat and repeat_interleave of an [8, 16] float32 tile by [2, 3], and of
its row 3 by [2, 2] (a leading dimension added), checked bit for bit
against torch (x.repeat, repeat_interleave dimension by dimension), with
-0.0 and NaN among the values, outputs poisoned first.

    python3 tests/gpu/repeat_check.py --lib build/runtime/libtlsrt.so \\
        --ptx repeat.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
from gpu_check import run_rounds


def check_round(torch, mod, rnd):
    x = torch.randn(8, 16, device="cuda")
    x[1, 2], x[5, 7], x[3, 0] = -0.0, float("nan"), float("-inf")
    y = torch.full((16, 48), 12345.0, device="cuda")
    z = torch.full((16, 48), 12345.0, device="cuda")
    w = torch.full((2, 32), 12345.0, device="cuda")
    mod.Repeat(x, y, z, w)
    torch.cuda.synchronize()
    checks = (
        ("repeat [2, 3]", y, x.repeat(2, 3)),
        ("repeat_interleave [2, 3]", z, x.repeat_interleave(2, 0).repeat_interleave(3, 1)),
        ("repeat_interleave [2, 2] of a row", w,
         x[3].reshape(1, 16).repeat_interleave(2, 0).repeat_interleave(2, 1)),
    )
    ok = True
    for name, got, ref in checks:
        good = torch.equal(got.view(torch.int32), ref.view(torch.int32))  # bit for bit
        print(f"round {rnd} {name}: {'PASS' if good else 'FAIL'}")
        ok = ok and good
    return ok


if __name__ == "__main__":
    run_rounds("repeat_check", 2, check_round)
