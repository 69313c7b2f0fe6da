#!/usr/bin/env python3
"""Runs tests/gpu/kernels/scan.tls (compiled by tlsc) on the GPU: scan,
cumsum and cumprod along each dimension of float32, int32 and float16
tiles, inclusive and exclusive, against torch (cumsum, cumprod, cummax,
cummin, and the bitwise prefixes computed in int64 on the host side of
the check), outputs poisoned first. Floats by relative error (the parallel
order differs from torch's), integers exactly.

    python3 tests/gpu/scan_check.py --lib build/runtime/libtlsrt.so \\
        --ptx scan.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
from gpu_check import run_rounds


def exclusive(torch, inc, x, dim, combine_identity):
    """The exclusive prefix from the inclusive one: shifted by one along dim."""
    out = torch.roll(inc, 1, dims=dim)
    idx = [slice(None)] * x.dim()
    idx[dim] = 0
    out[tuple(idx)] = combine_identity
    return out


def bitwise_scan(torch, x, dim, op):
    acc = x.clone()
    n = x.shape[dim]
    for i in range(1, n):
        a = acc.narrow(dim, i - 1, 1)
        b = acc.narrow(dim, i, 1)
        b.copy_(op(a, b))
    return acc


def report(rnd, name, good, detail=""):
    print(f"round {rnd} {name}: {'PASS' if good else 'FAIL'} {detail}")
    return good


def rel(torch, got, ref):
    return ((got.double() - ref.double()).norm() / ref.double().norm()).item()


def check_float(torch, mod, rnd):
    x = torch.randn(32, 128, device="cuda")
    p = 1.0 + 0.01 * torch.randn(32, 128, device="cuda")
    y = torch.full((6, 32, 128), float("nan"), device="cuda")
    mod.ScanFloat(x, p, y)
    torch.cuda.synchronize()
    xd = x.double()
    refs = [
        ("cumsum dim 1", xd.cumsum(1)),
        ("cumsum dim 0", xd.cumsum(0)),
        ("exclusive cumsum dim -1", xd.cumsum(1) - xd),
        ("cumprod dim 1", p.double().cumprod(1)),
        ("scan max dim 0", torch.cummax(x, 0).values.double()),
        ("exclusive scan min dim 1",
         exclusive(torch, torch.cummin(x, 1).values, x, 1, float("inf")).double()),
    ]
    ok = True
    for i, (name, ref) in enumerate(refs):
        got = y[i]
        if "max" in name or "min" in name:  # exact: the same values, selected
            good = torch.equal(got.double(), ref)
            ok = report(rnd, name, good) and ok
        else:
            err = rel(torch, got, ref)
            ok = report(rnd, name, err < 1e-5, f"rel_err {err:.2e}") and ok
    return ok


def check_int(torch, mod, rnd):
    x = torch.randint(-(2**31), 2**31 - 1, (16, 128), device="cuda", dtype=torch.int32)
    x[3] = -1  # rows that keep 'and' non-zero for a while
    y = torch.full((4, 16, 128), 12345, device="cuda", dtype=torch.int32)
    mod.ScanInt(x, y)
    torch.cuda.synchronize()
    xl = x.long()
    wrap = lambda t: ((t + 2**31) % 2**32 - 2**31).to(torch.int32)  # noqa: E731
    refs = [
        ("scan xor dim 1", bitwise_scan(torch, xl, 1, torch.bitwise_xor).to(torch.int32)),
        ("scan and dim 0", bitwise_scan(torch, xl, 0, torch.bitwise_and).to(torch.int32)),
        ("scan or dim 1", bitwise_scan(torch, xl, 1, torch.bitwise_or).to(torch.int32)),
        ("exclusive cumsum dim 1 (wrapping)", wrap(xl.cumsum(1) - xl)),
    ]
    ok = True
    for i, (name, ref) in enumerate(refs):
        ok = report(rnd, name, torch.equal(y[i], ref)) and ok
    return ok


def check_row(torch, mod, rnd):
    x = torch.rand(2048, device="cuda").half()
    y = torch.full((2048,), float("nan"), device="cuda").half()
    mod.ScanRow(x, y)
    torch.cuda.synchronize()
    ref = x.double().cumsum(0)
    err = rel(torch, y, ref)
    return report(rnd, "float16 row cumsum over 8 warps", err < 1e-3, f"rel_err {err:.2e}")


def check_warp(torch, mod, rnd):
    x = torch.randn(32, 8, device="cuda")
    x[4, 3] = -0.0
    y = torch.full((32, 8), float("nan"), device="cuda")
    z = torch.full((8, 32), float("nan"), device="cuda")
    mod.ScanWarp(x, y, z)
    torch.cuda.synchronize()
    ref = x.double().cumsum(0)
    ok = report(rnd, "one warp cumsum dim 0", rel(torch, y, ref) < 1e-5)
    ok = report(rnd, "transpose then cumsum dim 1", rel(torch, z, ref.t()) < 1e-5) and ok
    return ok


def check_round(torch, mod, rnd):
    ok = check_float(torch, mod, rnd)
    ok = check_int(torch, mod, rnd) and ok
    ok = check_row(torch, mod, rnd) and ok
    return check_warp(torch, mod, rnd) and ok


if __name__ == "__main__":
    run_rounds("scan_check", 2, check_round)
