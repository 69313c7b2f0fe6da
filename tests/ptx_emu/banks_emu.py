#!/usr/bin/env python3
"""banks_emu.py PTX ENTRY... : runs each entry of a dot kernel (parameters
m, n, k, a, b, c, as dot_emu.py's) for one block on the CPU with ptxemu and
counts, for every execution of every ld.shared / st.shared by a warp, the
shared-memory wavefronts it takes: 32 banks of 4 bytes, a wavefront per
distinct word a bank serves (one word read by many lanes counts once),
lanes taken 32, 16 or 8 at a time for accesses of 4, 8 or 16 bytes. Prints
each instruction's worst ratio to the ideal (its bytes over 128) and exits
1 when any access takes more wavefronts than the ideal: a bank conflict.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxemu  # noqa: E402

M, N, K = 128, 64, 32


def record(log):
    """Wraps Block.memop so that each shared access lands in log[(block,
    instruction)] as (thread, address, bytes)."""
    memop = ptxemu.Block.memop

    def logged(self, t, ins, load):
        if ".shared" in ins.op:
            _, bits, _ = ptxemu.type_of(ins.op)
            vec = 4 if ".v4" in ins.op else 2 if ".v2" in ins.op else 1
            addr = self.addr(t, ins.args[1] if load else ins.args[0])
            log[(id(self), ins.line.strip())].append((t, addr, bits // 8 * vec))
        return memop(self, t, ins, load)
    ptxemu.Block.memop = logged


def wavefronts(lanes):
    """Wavefronts of one warp's access: lanes [(thread, address, bytes)]."""
    size = lanes[0][2]
    phase = 32 if size <= 4 else 16 if size == 8 else 8
    total = 0
    for first in range(0, 32, phase):
        words = collections.defaultdict(set)
        for t, addr, nbytes in lanes:
            if first <= t % 32 < first + phase:
                for w in range(addr // 4, (addr + nbytes + 3) // 4):
                    words[w % 32].add(w)
        total += max((len(s) for s in words.values()), default=0)
    return total


def executions(accesses):
    """One warp's accesses of an instruction, split into its executions
    (each thread appears once in each)."""
    runs, seen = collections.defaultdict(list), collections.Counter()
    for a in accesses:
        runs[seen[a[0]]].append(a)
        seen[a[0]] += 1
    return runs.values()


def main():
    path, entries = sys.argv[1], sys.argv[2:]
    text = open(path).read()
    mod = ptxemu.Module(text)
    log = collections.defaultdict(list)
    record(log)
    for entry in entries:
        threads = int(re.search(r"//@tls entry %s script=\S+ block=(\d+)" % entry, text).group(1))
        mem = ptxemu.Memory()
        args = [M, N, K, mem.alloc(bytes(2 * M * K)), mem.alloc(bytes(2 * K * N)),
                mem.alloc(bytes(2 * M * N))]
        mod.run(entry, (1, 1, 1), threads, args, mem)
    worst = {}
    for (_, line), accesses in log.items():
        by_warp = collections.defaultdict(list)
        for a in accesses:
            by_warp[a[0] // 32].append(a)
        for warp in by_warp.values():
            for run in executions(warp):
                ideal = max(1, (sum(a[2] for a in run) + 127) // 128)
                worst[line] = max(worst.get(line, 0), wavefronts(run) / ideal)
    conflicts = {line: r for line, r in worst.items() if r > 1}
    for line, r in sorted(conflicts.items(), key=lambda x: -x[1]):
        print(f"{r:5.2f}x  {line}")
    print(f"{len(worst)} shared accesses, {len(conflicts)} with bank conflicts")
    return 1 if conflicts else 0


if __name__ == "__main__":
    sys.exit(main())
