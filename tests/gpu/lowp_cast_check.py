#!/usr/bin/env python3
"""Runs tests/gpu/kernels/lowp_cast.tls (compiled by tlsc) on the GPU: each
entry views random bytes as a small integer type (int1b ... uint8) or a
sub-byte float (float3_e1m1 ... float7_e5m1, as Tilus defines them), casts
the elements to float16 or bfloat16 and computes with them in pairs of
halves. Checks, exactly, against the same steps in torch:

    h = value of each element (bits [i*b, i*b+b) of the bytes, low first)
    y = 3.0 - h * 0.5,   z = h * y        (rounded to the 16-bit type)

    python3 tests/gpu/lowp_cast_check.py --lib build/runtime/libtlsrt.so \
        --ptx lowp_cast.ptx

Each entry's config gives its bytes per thread (nbytes: 3, 4, 5 or 7); each runs
on an aligned source and on one a byte off (the kernel's unaligned copy,
bytes loaded one by one). Every byte value appears in every round (the
first 256 bytes are 0..255, the rest random), outputs are poisoned (NaN)
first. Exits 3 without torch or a GPU (a skip under
tests/gpu/run_or_skip.sh), 1 when a check fails.
"""
import sys

from gpu_check import setup

torch = None  # imported by setup(), skipping without it

BITS = {f"{s}int{b}b": b for s in ("", "u") for b in range(1, 8)}
BITS.update(int8=8, uint8=8)
FLOATS = {f"float{n}_e{e}m{n - 1 - e}": (n, e) for n in range(3, 8) for e in range(1, n - 1)}


def float_value(codes, bits, ebits):
    """Sub-byte float codes as Tilus defines them: bias 2^(e-1) - 1,
    subnormals at exponent 0, no inf or nan, but for a 5-bit exponent,
    whose all-ones exponent reads as float16's (inf, or nan when the
    mantissa is not zero)."""
    mbits, bias = bits - 1 - ebits, (1 << (ebits - 1)) - 1
    sign = torch.where((codes >> (bits - 1)) & 1 == 1, -1.0, 1.0).double()
    exp = ((codes >> mbits) & ((1 << ebits) - 1)).double()
    man = (codes & ((1 << mbits) - 1)).double()
    value = sign * torch.where(exp == 0, man / 2**mbits * 2.0**(1 - bias),
                               (1 + man / 2**mbits) * 2.0**(exp - bias))
    if ebits == 5:
        special = torch.where(man == 0, sign * float("inf"), torch.full_like(value, float("nan")))
        value = torch.where(exp == 31, special, value)
    return value


def decode(raw, name):
    """The elements of the byte stream raw (uint8) as `name`, in float64."""
    bits, ebits = FLOATS.get(name, (BITS.get(name), 0))
    planes = (raw.long()[:, None] >> torch.arange(8, device=raw.device)) & 1
    planes = planes.reshape(-1, bits)
    codes = (planes << torch.arange(bits, device=raw.device)).sum(1)
    if ebits:
        return float_value(codes, bits, ebits)
    if not name.startswith("u"):
        codes = torch.where(codes >= 1 << (bits - 1), codes - (1 << bits), codes)
    return codes.double()


def main():
    global torch
    torch, o, mod = setup("lowp_cast_check", 2)
    blocks, ok, seen = 37, True, 0
    for rnd in range(o.rounds):
        torch.manual_seed(rnd)
        for k, shift in ((k, shift) for k in mod.kernels for shift in (0, 1)):
            size = blocks * 128 * int(k.config["nbytes"])
            buf = torch.randint(0, 256, (size + 1,), dtype=torch.uint8, device="cuda")
            raw = buf[shift:shift + size]  # 1 byte off: the body's unaligned copy
            raw[:256] = torch.arange(256, dtype=torch.uint8, device="cuda")
            wname, oname = k.config["wdtype"], k.config["odtype"]
            odt = getattr(torch, oname)
            h = decode(raw, wname).to(odt)
            y = 3.0 - h * 0.5
            z = h * y
            outs = [torch.full_like(h, float("nan")) for _ in range(3)]
            k(blocks, raw, *outs)
            torch.cuda.synchronize()
            for label, got, ref in zip(("h", "y", "z"), outs, (h, y, z)):
                # a NaN differs unless the reference is NaN too (an e5 code's)
                bad = int(((got != ref) & ~(got.isnan() & ref.isnan())).sum().item())
                if bad:
                    print(f"round {rnd} {k.name} (source {shift} byte off) {label}: {bad} of {ref.numel()} differ, e.g. "
                          f"{got[got != ref][:4].tolist()} for {ref[got != ref][:4].tolist()}")
                    ok = False
            seen += 1
    print(f"{seen} entry runs, {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
