#!/usr/bin/env python3
"""lowp_cast_emu.py PTX: runs every entry of tests/gpu/kernels/lowp_cast.tls
(compiled to PTX) on the CPU with ptxemu, and checks its three outputs bit
for bit against the same steps computed here, as tests/gpu/lowp_cast_check.py
does on the GPU against torch:

    h = value of each element (bits [i*b, i*b+b) of the bytes, low first)
    y = 3.0 - h * 0.5,   z = h * y        (rounded to the 16-bit type)

One block of 128 threads, on a source whose first 256 bytes are 0..255 and
the rest random, aligned and one byte off (the kernel's aligned and
unaligned copies). Sub-byte floats as Tilus defines them (bias 2^(e-1) -
1, subnormals at exponent 0; a 5-bit exponent's all-ones codes are
float16's inf and nan). Exits 1 when an output differs.
"""
import math
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402


def bits_of(name):
    """(bits, exponent bits, signed) of a small type's name."""
    m = re.match(r"float(\d)_e(\d)m\d$", name)
    if m:
        return int(m.group(1)), int(m.group(2)), True
    m = re.match(r"(u?)int(\d)b?$", name)
    return int(m.group(2)), 0, m.group(1) == ""


def value(code, name):
    bits, ebits, signed = bits_of(name)
    if not ebits:
        return code - (1 << bits) if signed and code >> (bits - 1) else code
    mbits, bias = bits - 1 - ebits, (1 << (ebits - 1)) - 1
    sign = -1.0 if code >> (bits - 1) & 1 else 1.0
    ex, man = (code >> mbits) & ((1 << ebits) - 1), code & ((1 << mbits) - 1)
    if ebits == 5 and ex == 31:
        return sign * math.inf if man == 0 else math.nan
    if ex == 0:
        return sign * math.ldexp(man, 1 - bias - mbits)
    return sign * math.ldexp((1 << mbits) + man, ex - bias - mbits)


def reference(raw, name, half):
    """The h, y, z bit patterns the kernel must write, per element."""
    to_val, to_bits = ptxemu.HALF[half]
    bits = bits_of(name)[0]
    stream = int.from_bytes(raw, "little")
    h, y, z = [], [], []
    for i in range(len(raw) * 8 // bits):
        hb = to_bits(float(value((stream >> (i * bits)) & ((1 << bits) - 1), name)))
        hv = to_val(hb)
        tb = to_bits(hv * 0.5)
        yb = to_bits(3.0 - to_val(tb)) if not math.isnan(to_val(tb)) else to_bits(math.nan)
        yv = to_val(yb)
        try:
            zb = to_bits(hv * yv)
        except (OverflowError, ValueError):
            zb = to_bits(math.nan)
        h.append(hb)
        y.append(yb)
        z.append(zb)
    return h, y, z


def same(a, b, half):
    to_val = ptxemu.HALF[half][0]
    return a == b or (math.isnan(to_val(a)) and math.isnan(to_val(b)))


def entries(text):
    """name -> config dict, from the module's //@tls lines."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"//@tls entry (\w+)", line)
        if m:
            name = m.group(1)
        m = re.match(r"//@tls config (.*)", line)
        if m and name:
            out[name] = dict(kv.split("=", 1) for kv in m.group(1).split())
    return out


def main():
    text = open(sys.argv[1]).read()
    mod = ptxemu.Module(text)
    rng = random.Random(7)
    bad = runs = 0
    for name, cfg in entries(text).items():
        nbytes, half = int(cfg["nbytes"]), "bf16" if cfg["odtype"] == "bfloat16" else "f16"
        size = 128 * nbytes
        count = size * 8 // bits_of(cfg["wdtype"])[0]
        for shift in (0, 1):
            buf = bytearray(rng.randrange(256) for _ in range(size + 1))
            raw = buf[shift:shift + size]
            raw[:256] = bytes(range(256))
            buf[shift:shift + size] = raw
            mem = ptxemu.Memory()
            src = mem.alloc(buf) + shift
            outs = [mem.alloc(b"\xff" * (2 * count)) for _ in range(3)]
            try:
                mod.run(name, 1, 128, [1, src, *outs], mem)
            except ptxemu.EmuError as err:
                print(f"{name} (source {shift} byte off): {err}")
                bad += 1
                continue
            for label, addr, ref in zip("hyz", outs, reference(bytes(raw), cfg["wdtype"], half)):
                data = mem.data(addr)
                got = [int.from_bytes(data[2 * i:2 * i + 2], "little") for i in range(count)]
                wrong = [i for i in range(count) if not same(got[i], ref[i], half)]
                if wrong:
                    bad += 1
                    i = wrong[0]
                    print(f"{name} (source {shift} byte off) {label}: {len(wrong)} of {count} "
                          f"differ, e.g. element {i}: {got[i]:#06x} for {ref[i]:#06x}")
            runs += 1
    print(f"{runs} entry runs, {'PASS' if not bad else 'FAIL'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
