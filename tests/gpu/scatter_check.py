#!/usr/bin/env python3
"""Runs tests/gpu/kernels/scatter.tls (compiled by tlsc) on the GPU:
store_global_scatter of float32 columns and float16 rows, and
store_shared_scatter of int32 rows, with distinct indices per line and
some outside the destination (negative, past its end), which must store
nothing. Checked exactly against a host-side scatter, destinations
poisoned (or filled by the kernel) first.

    python3 tests/gpu/scatter_check.py --lib build/runtime/libtlsrt.so \\
        --ptx scatter.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
from gpu_check import run_rounds


def distinct_indices(torch, lines, count, extent, outside):
    """lines x count indices, distinct in each line, `outside` of them
    replaced by values outside [0, extent)."""
    idx = torch.stack([torch.randperm(extent)[:count] for _ in range(lines)]).to(torch.int32)
    for line in range(lines):
        for k in torch.randperm(count)[:outside].tolist():
            idx[line, k] = -1 - k if k % 2 else extent + k
    return idx


def reference(torch, dst, dim, idx, values):
    out = dst.clone()
    keep = (idx >= 0) & (idx < dst.shape[dim])
    for pos in keep.nonzero().tolist():
        target = list(pos)
        target[dim] = int(idx[tuple(pos)])
        out[tuple(target)] = values[tuple(pos)]
    return out


def report(rnd, name, good):
    print(f"round {rnd} {name}: {'PASS' if good else 'FAIL'}")
    return good


def check_round(torch, mod, rnd):
    x = torch.randn(16, 64)
    i = distinct_indices(torch, 16, 64, 256, 5)
    y = torch.full((16, 256), float("nan"))
    h = torch.randn(32, 8).half()
    j = distinct_indices(torch, 8, 32, 100, 3).t().contiguous()  # distinct down each column
    z = torch.full((100, 8), 7.0).half()
    yd, zd = y.cuda(), z.cuda()
    mod.ScatterGlobal(x.cuda(), i.cuda(), yd, h.cuda(), j.cuda(), zd)
    v = torch.randint(-1000, 1000, (32, 16), dtype=torch.int32)
    k = distinct_indices(torch, 16, 32, 64, 4).t().contiguous()
    w = torch.full((64, 16), 12345, dtype=torch.int32).cuda()
    mod.ScatterShared(v.cuda(), k.cuda(), w)
    torch.cuda.synchronize()
    ok = report(rnd, "global scatter along dim 1 (float32)",
                torch.equal(yd.cpu().nan_to_num(-9.0), reference(torch, y, 1, i, x).nan_to_num(-9.0)))
    ok = report(rnd, "global scatter along dim 0 (float16)",
                torch.equal(zd.cpu(), reference(torch, z, 0, j, h))) and ok
    want = reference(torch, torch.full((64, 16), -7, dtype=torch.int32), 0, k, v)
    return report(rnd, "shared scatter along dim 0 (int32)", torch.equal(w.cpu(), want)) and ok


if __name__ == "__main__":
    run_rounds("scatter_check", 2, check_round)
