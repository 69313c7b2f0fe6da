#!/usr/bin/env python3
"""Runs tests/gpu/kernels/atomic.tls (compiled by tlsc) on the GPU: the
self.atomic group with four blocks adding into the same destinations
(element-wise int32 and float32 add, max, sub, an add whose old values are
kept), a histogram by global_scatter_add and shared_scatter_add (indices
outside the bins skipped), and shared cas and exch with their old values,
against host-side references: integers exactly, the float sum by relative
error (the blocks' order varies), the old values as a permutation of the
counts each block saw.

    python3 tests/gpu/atomic_check.py --lib build/runtime/libtlsrt.so \\
        --ptx atomic.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
from gpu_check import run_rounds


def report(rnd, name, good):
    print(f"round {rnd} {name}: {'PASS' if good else 'FAIL'}")
    return good


def check_global(torch, mod, rnd):
    x = torch.randint(-1000, 1000, (4, 8, 32), dtype=torch.int32, device="cuda")
    f = torch.randn(4, 8, 32, device="cuda")
    a = torch.randint(-5, 5, (8, 32), dtype=torch.int32, device="cuda")
    fa = torch.randn(8, 32, device="cuda")
    m = torch.randint(-2000, 2000, (8, 32), dtype=torch.int32, device="cuda")
    s = torch.randint(-5, 5, (8, 32), dtype=torch.int32, device="cuda")
    k = torch.zeros(8, 32, dtype=torch.int32, device="cuda")
    old = torch.full((4, 8, 32), -99, dtype=torch.int32, device="cuda")
    want = (a + x.sum(0), fa.double() + f.double().sum(0), torch.maximum(m, x.max(0).values),
            s - x.sum(0))
    mod.AtomicGlobal(x, f, a, fa, m, s, k, old)
    torch.cuda.synchronize()
    ok = report(rnd, "global_add int32", torch.equal(a, want[0].int()))
    err = ((fa.double() - want[1]).norm() / want[1].norm()).item()
    ok = report(rnd, f"global_add float32 (rel_err {err:.1e})", err < 1e-6) and ok
    ok = report(rnd, "global_max int32", torch.equal(m, want[2])) and ok
    ok = report(rnd, "global_sub int32 (release)", torch.equal(s, want[3].int())) and ok
    ok = report(rnd, "global_add counter", bool((k == 4).all())) and ok
    seen = old.sort(0).values  # each element's four blocks saw 0, 1, 2, 3
    ok = report(rnd, "old values of the counter",
                torch.equal(seen, torch.arange(4, dtype=torch.int32, device="cuda")
                            .view(4, 1, 1).expand(4, 8, 32))) and ok
    return ok


def check_scatter(torch, mod, rnd):
    i = torch.randint(-4, 68, (4, 16, 32), dtype=torch.int32, device="cuda")
    h = torch.zeros(16, 64, dtype=torch.int32, device="cuda")
    hs = torch.full((4, 16, 64), -1, dtype=torch.int32, device="cuda")
    mod.AtomicScatter(i, h, hs)
    torch.cuda.synchronize()
    ref = torch.zeros(4, 16, 64, dtype=torch.int64)
    ic = i.cpu().long()
    for b in range(4):
        for r in range(16):
            for idx in ic[b, r].tolist():
                if 0 <= idx < 64:
                    ref[b, r, idx] += 1
    ok = report(rnd, "global_scatter_add histogram", torch.equal(h.cpu().long(), ref.sum(0)))
    return report(rnd, "shared_scatter_add histograms", torch.equal(hs.cpu().long(), ref)) and ok


def check_cas(torch, mod, rnd):
    init = torch.arange(16 * 32, dtype=torch.int32).view(16, 32)
    hit = torch.rand(16, 32) < 0.5
    c = torch.where(hit, init, init + 1).cuda()
    v = torch.randint(-10**6, 10**6, (16, 32), dtype=torch.int32).cuda()
    out = torch.full((4, 16, 32), 7, dtype=torch.int32, device="cuda")
    mod.AtomicCas(c, v, out)
    torch.cuda.synchronize()
    after = torch.where(hit, v.cpu(), init)
    o = out.cpu()
    ok = report(rnd, "shared_cas old values", torch.equal(o[0], init))
    ok = report(rnd, "shared_cas result", torch.equal(o[1], after)) and ok
    ok = report(rnd, "shared_exch old values", torch.equal(o[2], after)) and ok
    return report(rnd, "shared_exch result", torch.equal(o[3], init)) and ok


def check_round(torch, mod, rnd):
    ok = check_global(torch, mod, rnd)
    ok = check_scatter(torch, mod, rnd) and ok
    return check_cas(torch, mod, rnd) and ok


if __name__ == "__main__":
    run_rounds("atomic_check", 2, check_round)
