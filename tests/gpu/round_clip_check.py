#!/usr/bin/env python3
"""Runs tests/gpu/kernels/round_clip.tls (compiled by tlsc) on the GPU:
y = clip(round(x), lo, hi) element by element, checked exactly against
torch: float32 with run-time bounds (also lo > hi, where lo wins, as Tilus
computes max(min(x, hi), lo)), float16 with the bounds -3.3 and 5.7 rounded
to float16, int32 with -7 and int32(2.7) = 2. Values include ties (k +
0.5: round to even), at a ragged n, outputs poisoned first.

    python3 tests/gpu/round_clip_check.py --lib build/runtime/libtlsrt.so \\
        --ptx round_clip.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
from gpu_check import run_rounds


def clip(torch, x, lo, hi):
    return torch.maximum(torch.minimum(x, torch.full_like(x, hi)), torch.full_like(x, lo))


def check_round(torch, mod, rnd):
    ok = True
    n = 1000
    xf = (torch.rand(n, device="cuda") - 0.5) * 40
    xf[::7] = torch.randint(-20, 20, (len(xf[::7]),), device="cuda").float() + 0.5  # ties
    xh = ((torch.rand(n, device="cuda") - 0.5) * 16).half()
    xh[::5] = (torch.randint(-8, 8, (len(xh[::5]),), device="cuda").float() + 0.5).half()
    xi = torch.randint(-20, 20, (n,), device="cuda", dtype=torch.int32)
    for lo, hi in ((-6.25, 9.5), (3.0, -2.0)):
        yf = torch.full((n,), float("nan"), device="cuda")
        yh = torch.full((n,), float("nan"), device="cuda", dtype=torch.float16)
        yi = torch.full((n,), -12345, device="cuda", dtype=torch.int32)
        mod.RoundClip(n, lo, hi, xf, yf, xh, yh, xi, yi)
        torch.cuda.synchronize()
        checks = (
            ("float32", yf, clip(torch, torch.round(xf), lo, hi)),
            ("float16", yh.float(),
             clip(torch, torch.round(xh.float()), float(torch.tensor(-3.3).half()),
                  float(torch.tensor(5.7).half()))),
            ("int32", yi, torch.clamp(xi, -7, 2)),
        )
        for name, got, ref in checks:
            bad = int((got != ref).sum().item())
            print(f"round {rnd} lo={lo} hi={hi} {name}: {bad} of {n} differ"
                  f" {'FAIL' if bad else 'PASS'}")
            ok = ok and not bad
    return ok


if __name__ == "__main__":
    run_rounds("round_clip_check", 2, check_round)
