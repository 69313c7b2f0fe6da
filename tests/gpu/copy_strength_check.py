#!/usr/bin/env python3
"""Runs tests/gpu/kernels/copy_strength.tls (compiled by tlsc) on the GPU:
copy_async in pipelined, unrolled loops whose global addresses the backend
strength-reduces (one register per copy advancing by a constant each
trip, immediates between the unrolled copies), and a copy whose offset is
assigned inside an `if` (computed per copy). Each block sums the tiles it
copied; the sums are checked exactly against torch (small integers in
float16, summed in float32), at ragged m and at trip counts that are and
are not multiples of the unroll factor, outputs poisoned (NaN) first.

    python3 tests/gpu/copy_strength_check.py --lib build/runtime/libtlsrt.so \
        --ptx copy_strength.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
import sys

from gpu_check import setup

torch = None  # imported by setup(), skipping without it


def ints(*shape):
    """Small integers as float16: their float32 sums are exact."""
    return torch.randint(-8, 9, shape, device="cuda").half()


def tile_sums(src, starts, width):
    """sum over t of src[..., starts[t] : starts[t] + width] along the last
    dimension, the columns outside src counting zero (float64)."""
    out = torch.zeros(*src.shape[:-1], width, dtype=torch.float64, device="cuda")
    cols = torch.arange(width, device="cuda")
    for s in starts:
        c = s + cols
        ok = (c >= 0) & (c < src.shape[-1])
        out[..., ok] += src[..., c[ok]].double()
    return out


def row_sums(src, rows_of_trip, nrows):
    """sum over the trips of src[r0 : r0 + nrows], r0 each trip's first
    row (rows_of_trip), the rows outside src counting zero (float64)."""
    out = torch.zeros(nrows, *src.shape[1:], dtype=torch.float64, device="cuda")
    for r0 in rows_of_trip:
        for r in range(nrows):
            if r0 + r < src.shape[0]:
                out[r] += src[r0 + r].double()
    return out


def compare(label, got, ref):
    bad = int((got.double() != ref).sum().item())  # NaN (unwritten) counts too
    if bad:
        print(f"{label}: {bad} of {ref.numel()} differ, e.g. {got[got.double() != ref][:4].tolist()}"
              f" for {ref[got.double() != ref][:4].tolist()}")
    return bad == 0


def check_strength(k, m, k_size):
    a, b, c, s = ints(m, 1024), ints(64, 64), ints(64, 2, 32), ints(8, 64)
    blocks = (m + 63) // 64
    outs = [torch.full(shape, float("nan"), device="cuda")
            for shape in ((m, 32), (blocks, 2, 64), (blocks, 2, 2, 32), (blocks, 64))]
    k(m, k_size, a, b, c, s, *outs)
    torch.cuda.synchronize()
    trips = range(0, k_size, 32)
    ref_a = tile_sums(a, list(trips), 32)
    ref_b = row_sums(b, [t // 16 for t in trips], 2)
    ref_c = row_sums(c, [t // 16 for t in trips], 2)
    ref_s = row_sums(s, [t // 128 for t in trips], 1)[0]
    label = f"{k.name} m={m} k_size={k_size}"
    return all([compare(label + " A", outs[0], ref_a),
                compare(label + " B", outs[1], ref_b.expand(blocks, -1, -1)),
                compare(label + " C", outs[2], ref_c.expand(blocks, -1, -1, -1)),
                compare(label + " S", outs[3], ref_s.expand(blocks, -1))])


def check_if(k, k_size, flip):
    a = ints(64, 1024)
    out = torch.full((64, 32), float("nan"), device="cuda")
    k(k_size, flip, a, out)
    torch.cuda.synchronize()
    starts = [k_size - 32 - t if flip == 1 else t for t in range(0, k_size, 32)]
    return compare(f"{k.name} k_size={k_size} flip={flip}", out, tile_sums(a, starts, 32))


def main():
    global torch
    torch, o, mod = setup("copy_strength_check", 2)
    ok, seen = True, 0
    for rnd in range(o.rounds):
        torch.manual_seed(rnd)
        for k in mod.kernels:
            if k.name.startswith("CopyStrength"):
                for m, k_size in ((200, 1024), (64, 96), (1, 64), (130, 32), (200, 736),
                                  (64, 1000)):
                    ok &= check_strength(k, m, k_size)
                    seen += 1
            else:
                for k_size, flip in ((1024, 0), (1024, 1), (96, 1), (1000, 1)):
                    ok &= check_if(k, k_size, flip)
                    seen += 1
    print(f"{seen} runs, {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
