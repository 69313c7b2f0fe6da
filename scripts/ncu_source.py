#!/usr/bin/env python3
"""ncu_source.py: what ncu's source page says of each kernel, in short.

    ncu --import REPORT --page source --csv --print-source sass > src.csv
    python3 scripts/ncu_source.py src.csv [--top N] [--diff A B]

(src.csv may be gzipped.) For each kernel of the file, numbered in order
from 0 (ncu names a kernel once per launch profiled): its executed warp
instructions by opcode, the instructions that move the most shared-memory
wavefronts (per warp-level execution, with the excess ncu counts beyond
the ideal), and its warp-stall samples by reason. With --diff A B, kernel
A's opcode counts and stall reasons beside kernel B's, the rows that
differ, largest difference first: how the int8 matmul_a16wx.py kernels of
tlsc and Tilus were compared (docs/performance.md, "The first measured
difference: shared-memory wavefronts").
"""
import argparse
import collections
import csv
import gzip
import sys


def number(cell):
    """A counter cell ('1,572,864', '-' or '') as an int."""
    cell = cell.replace(",", "")
    return int(cell) if cell.isdigit() else 0


class Kernel:
    def __init__(self, index, name):
        self.index, self.name = index, name
        self.rows = []  # (source, executed, wavefronts, excessive wavefronts)
        self.opcodes = collections.Counter()
        self.stalls = collections.Counter()


def opcode(source):
    """The opcode of a SASS line, its predicate dropped ('@!P0 LDGSTS.E ...')."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def read(path):
    """The kernels of an ncu source-page CSV, in order."""
    opener = gzip.open if path.endswith(".gz") else open
    kernels, header = [], None
    with opener(path, "rt", newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                kernels.append(Kernel(len(kernels), row[1]))
                header = None
            elif row[0] == "Address":
                header = {name: i for i, name in enumerate(row)}
            elif header and kernels and len(row) >= len(header):
                add_row(kernels[-1], header, row)
    return kernels


def add_row(k, header, row):
    def cell(name):
        i = header.get(name)
        return number(row[i]) if i is not None else 0

    source = row[header["Source"]].strip()
    executed = cell("Instructions Executed")
    k.rows.append((source, executed, cell("L1 Wavefronts Shared"),
                   cell("L1 Wavefronts Shared Excessive")))
    k.opcodes[opcode(source)] += executed
    for name, i in header.items():
        if name.startswith("stall_") and "(Not Issued)" not in name:
            k.stalls[name[len("stall_"):]] += number(row[i])


def summary(k, top):
    lines = [f"== kernel {k.index}: {k.name}",
             f"executed warp instructions: {sum(k.opcodes.values())}"]
    for op, n in k.opcodes.most_common(top):
        lines.append(f"  {op:<34} {n:>14}")
    shared = sorted((r for r in k.rows if r[1] and r[2]), key=lambda r: -r[2])[:top]
    lines.append(f"shared wavefronts: {sum(r[2] for r in k.rows)} "
                 f"(excessive {sum(r[3] for r in k.rows)}); most, per warp-level execution:")
    for source, executed, wavefronts, excess in shared:
        lines.append(f"  {wavefronts / executed:6.2f} (excess {excess / executed:5.2f})  "
                     f"x {executed:>10}  {source[:70]}")
    lines.append(f"warp-stall samples: {sum(k.stalls.values())}")
    for reason, n in k.stalls.most_common(top):
        if n:
            lines.append(f"  {reason:<24} {n:>10}")
    return lines


def diff(a, b, top):
    lines = [f"== kernel {a.index} ({a.name}) - kernel {b.index} ({b.name})"]
    for title, ca, cb in (("executed warp instructions by opcode", a.opcodes, b.opcodes),
                          ("warp-stall samples by reason", a.stalls, b.stalls)):
        lines.append(f"{title}: {sum(ca.values())} - {sum(cb.values())} = "
                     f"{sum(ca.values()) - sum(cb.values()):+d}")
        keys = [key for key in set(ca) | set(cb) if ca[key] != cb[key]]
        for key in sorted(keys, key=lambda x: (-abs(ca[x] - cb[x]), x))[:top]:
            lines.append(f"  {key:<34} {ca[key]:>12} {cb[key]:>12} {ca[key] - cb[key]:>+12}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv output (.gz or not)")
    ap.add_argument("--top", type=int, default=12, help="rows per list")
    ap.add_argument("--diff", nargs=2, type=int, metavar=("A", "B"),
                    help="kernel A beside kernel B (numbers as the summary prints them)")
    opts = ap.parse_args()
    kernels = read(opts.csv)
    if not kernels:
        print(f"ncu_source.py: error: no kernel in {opts.csv}", file=sys.stderr)
        return 1
    if opts.diff:
        bad = [i for i in opts.diff if not 0 <= i < len(kernels)]
        if bad:
            print(f"ncu_source.py: error: no kernel {bad[0]} (the file has {len(kernels)})",
                  file=sys.stderr)
            return 1
        print("\n".join(diff(kernels[opts.diff[0]], kernels[opts.diff[1]], opts.top)))
        return 0
    for k in kernels:
        print("\n".join(summary(k, opts.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
