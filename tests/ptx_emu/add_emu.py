#!/usr/bin/env python3
"""add_emu.py KERNEL.ptx ENTRY BLOCK_ELEMS EXTRA_BLOCKS: runs a c = a + b
kernel (examples/vector_add.tls; tests/gpu/kernels/scalar_ops.tls, which
adds through scalar reads, a tensor bound in each arm of a run-time `if`
and size-1 dimensions; early_return.tls, which returns early under
run-time branches and from a helper, leaving blocks past the end idle)
on the CPU with ptxemu over cdiv(n, BLOCK_ELEMS) + EXTRA_BLOCKS blocks, the
block's threads from the file's metadata, at ragged n, exactly against
Python; c poisoned first, and the words after it must stay untouched.
Exits 1 on a difference.
"""
import os
import random
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

GUARD = 64  # words after c that no block may write


def main():
    path, entry, per_block, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    text = open(path).read()
    mod = ptxemu.Module(text)
    threads = int(re.search(rf"//@tls entry {entry} .*block=(\d+)", text).group(1))
    rng = random.Random(23)
    bad = 0
    # n % 4: the copy of the body for unaligned rows (1, +3) and the aligned one
    for n in (1, per_block + 3, 2 * per_block, 3 * per_block - 4):
        a = [struct.unpack("<f", struct.pack("<f", rng.uniform(-8, 8)))[0] for _ in range(n)]
        b = [struct.unpack("<f", struct.pack("<f", rng.uniform(-8, 8)))[0] for _ in range(n)]
        mem = ptxemu.Memory()
        pa = mem.alloc(b"".join(struct.pack("<f", v) for v in a))
        pb = mem.alloc(b"".join(struct.pack("<f", v) for v in b))
        pc = mem.alloc(b"\xff" * 4 * (n + GUARD))
        blocks = (n + per_block - 1) // per_block + extra
        mod.run(entry, blocks, threads, [n, pa, pb, pc], mem)
        ref = [struct.unpack("<I", struct.pack("<f", x + y))[0] for x, y in zip(a, b)]
        bad += ptxemu.differ(mem, [(f"{entry} n={n}: c, then {GUARD} guard words", pc,
                                    ref + [0xFFFFFFFF] * GUARD)])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
