#!/usr/bin/env python3
"""dot_emu.py PTX LAYOUT BM BN ENTRY[@K]...: runs entries of a dot kernel
(compiled to PTX; C = A B, A [m, k], B [k, n] for LAYOUT kn or [n, k] for
nk, the grid [cdiv(m, BM), cdiv(n, BN)], through shared memory, ldmatrix
and mma.sync) on the CPU with ptxemu, at a size ragged in m, n and k
(130 x 72 x 40, 48 for 8-bit inputs; ENTRY@K another depth: 38 makes
A's rows 76 bytes, so the copies take the path for rows that are not
whole 16-byte chunks) against the exact product in Python.
Each entry's threads come from the file's `//@tls entry` line; its
parameters are (m, n, k, a, b, c). The element types follow the entry's
mma: float16 inputs and output, or int8 inputs and an int32 output. The
inputs are small integers, so that every sum is exact in float32 and the
float16 result, whatever order the tensor cores add in; the output is
poisoned first and must be written everywhere. Exits 1 on a difference.
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

M, N = 130, 72


def main():
    path, layout, bm, bn, entries = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
        sys.argv[5:]
    text = open(path).read()
    mod = ptxemu.Module(text)
    int8 = ".s8.s8.s32" in text
    K_DEFAULT = 48 if int8 else 40
    if int8:
        enc = lambda v: (v & 0xFF).to_bytes(1, "little")  # noqa: E731
        dec, width = (lambda b: ptxemu.sext(int.from_bytes(b, "little"), 32)), 4
    else:
        enc = lambda v: ptxemu.f16_bits(float(v)).to_bytes(2, "little")  # noqa: E731
        dec, width = (lambda b: ptxemu.f16_value(int.from_bytes(b, "little"))), 2
    inputs = {}

    def operands(K):
        """A, B as laid out, and the exact product, for depth K (made once)."""
        if K not in inputs:
            rng = random.Random(7 + K)
            a = [[rng.randint(-3, 3) for _ in range(K)] for _ in range(M)]
            b = [[rng.randint(-3, 3) for _ in range(N)] for _ in range(K)]
            ref = [[sum(a[i][k] * b[k][j] for k in range(K)) for j in range(N)] for i in range(M)]
            b_rows = b if layout == "kn" else [[b[k][j] for k in range(K)] for j in range(N)]
            inputs[K] = (a, b_rows, ref)
        return inputs[K]

    bad = 0
    for spec in entries:
        entry, _, k_text = spec.partition("@")
        K = int(k_text) if k_text else K_DEFAULT
        a, b_rows, ref = operands(K)
        threads = int(re.search(rf"//@tls entry {entry} .*block=(\d+)", text).group(1))
        mem = ptxemu.Memory()
        pa = mem.alloc(b"".join(enc(v) for row in a for v in row))
        pb = mem.alloc(b"".join(enc(v) for row in b_rows for v in row))
        pc = mem.alloc(b"\xff" * width * M * N)
        mod.run(entry, ((M + bm - 1) // bm, (N + bn - 1) // bn), threads, [M, N, K, pa, pb, pc], mem,
                smem=228 * 1024)
        data = mem.data(pc)
        got = [dec(data[width * i:width * i + width]) for i in range(M * N)]
        wrong = [i for i in range(M * N) if got[i] != ref[i // N][i % N]]
        print(f"{entry} {M}x{N}x{K}: {len(wrong)} of {M * N} differ {'FAIL' if wrong else 'PASS'}")
        bad += len(wrong)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
