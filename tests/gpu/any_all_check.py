#!/usr/bin/env python3
"""Runs tests/gpu/kernels/any_all.tls (compiled by tlsc) on the GPU: per
row of a float32 [m, 64] tensor, any(x != 0) and all(x > 0), checked
exactly against torch. Rows are built to hit every case: all zeros (some
-0.0), one non-zero element at a random column, a NaN alone, all positive,
all positive but one zero; at a ragged m, outputs poisoned first.

    python3 tests/gpu/any_all_check.py --lib build/runtime/libtlsrt.so \\
        --ptx any_all.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
from gpu_check import run_rounds


def rows(torch, m):
    """[m, 64] float32: row i of kind i % 5 (see the docstring)."""
    x = torch.rand(m, 64, device="cuda") + 0.5
    for i in range(m):
        col = int(torch.randint(0, 64, ()).item())
        kind = i % 5
        if kind in (0, 1, 2):
            x[i] = 0.0
            x[i, ::3] = -0.0
        if kind == 1:
            x[i, col] = -2.5
        if kind == 2:
            x[i, col] = float("nan")
        if kind == 4:
            x[i, col] = 0.0
    return x


def check_round(torch, mod, rnd):
    m = 77
    x = rows(torch, m)
    y = torch.full((m, 2), -1, device="cuda", dtype=torch.int32)
    mod.AnyAll(m, x, y)
    torch.cuda.synchronize()
    ref = torch.stack([(x != 0).any(dim=1), (x > 0).all(dim=1)], dim=1).int()
    bad = int((y != ref).sum().item())
    print(f"round {rnd}: {bad} of {ref.numel()} differ {'FAIL' if bad else 'PASS'}")
    return not bad


if __name__ == "__main__":
    run_rounds("any_all_check", 2, check_round)
