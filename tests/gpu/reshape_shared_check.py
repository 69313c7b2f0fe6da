#!/usr/bin/env python3
"""Runs tests/gpu/kernels/reshape_shared.tls (compiled by tlsc) on the GPU:
a [16, 64] float32 tile in shared memory read back through its reshapes
([4, 4, 64] view 2, [32, 32], [8, 128], a reshape of a reshape,
doubled in place, and the view [1] of [2, 8, 64] as [4, 128]), and a [64, 64] float16 tile loaded by TMA with the
128-byte swizzle read through its reshape to [2, 32, 64] (view 1). Bit for
bit against torch's reshapes, outputs poisoned first.

    python3 tests/gpu/reshape_shared_check.py --lib build/runtime/libtlsrt.so \\
        --ptx reshape_shared.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
from gpu_check import run_rounds


def check_round(torch, mod, rnd):
    x = torch.randn(16, 64, device="cuda")
    y = torch.full((4, 64), 12345.0, device="cuda")
    z = torch.full((32, 32), 12345.0, device="cuda")
    w = torch.full((16, 64), 12345.0, device="cuda")
    v = torch.full((4, 128), 12345.0, device="cuda")
    mod.ReshapeShared(x, y, z, w, v)
    h = torch.randn(64, 64, device="cuda").half()
    g = torch.full((32, 64), 12345.0, device="cuda").half()
    mod.ReshapeTma(h, g)
    torch.cuda.synchronize()
    checks = (
        ("[4, 4, 64] view 2", y, x.reshape(4, 4, 64)[2]),
        ("[32, 32]", z, x.reshape(32, 32)),
        ("[8, 128] doubled in place", w, x * 2.0),
        ("[2, 8, 64][1] as [4, 128]", v, x.reshape(2, 8, 64)[1].reshape(4, 128)),
        ("TMA tile as [2, 32, 64], view 1", g.view(torch.int16).int(),
         h.reshape(2, 32, 64)[1].view(torch.int16).int()),
    )
    ok = True
    for name, got, ref in checks:
        good = torch.equal(got.view(torch.int32), ref.contiguous().view(torch.int32))
        print(f"round {rnd} {name}: {'PASS' if good else 'FAIL'}")
        ok = ok and good
    return ok


if __name__ == "__main__":
    run_rounds("reshape_shared_check", 2, check_round)
