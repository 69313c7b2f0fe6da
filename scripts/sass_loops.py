#!/usr/bin/env python3
"""sass_loops.py: the main loop of a kernel's machine code, as opcodes.

    python3 scripts/sass_loops.py A.sass [B.sass] [--fun NAME]

Reads `cuobjdump -sass` output. In each function a loop is the range from
a backward branch's target to the branch; the main loop is the one with
the most tensor-core instructions (HMMA, HGMMA, IMMA), then the fewest
instructions (an inner loop before the loop around it; the body's
aligned copy before its element-by-element copy); in a function without
tensor instructions, the longest loop. A backward branch over an EXIT is
not a loop: ptxas puts an mbarrier wait's retry at the function's end,
which branches back into the code above (a warp-specialised kernel's
"loop" was the whole function without this). Prints its address range,
its instruction count and a count per opcode (the mnemonic with its
modifiers, predicates dropped),
and the instructions from the loop's end to the first EXIT with the
global stores among them: a matmul's epilogue, which runs once per block
but after every other warp's last tensor instruction (an Ampere matmul's
epilogue of 500 instructions against Tilus's 150 was found this way).
Given two files, the two main loops side by side with their difference,
largest first: what one compiler spends per iteration that the other does
not (issue 15, "diff the SASS of both per region"; scripts/tilus_sass.sh
runs it on tlsc's fastest entry and each program Tilus built).

--fun picks the function by name (a substring); without it, the first
function that has a loop. Exits 1 when a file has no function with a
loop.
"""
import argparse
import re
import signal
import sys
from collections import Counter

FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH = re.compile(r"\bBRA\b(?:\s+!?U?P\w+,)?\s+(0x[0-9a-f]+)")
TENSOR = ("HMMA", "HGMMA", "IMMA", "QGMMA")


def functions(text):
    """{name: [(address, opcode, instruction text)]} in file order."""
    out, name = {}, None
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = INSN.match(line)
        if m and name is not None:
            body = re.sub(r"^@!?U?P\w+\s+", "", m.group(2))
            out[name].append((int(m.group(1), 16), body.split()[0], body))
    return out


def main_loop(insns):
    """(first, last) addresses of the main loop, or None."""
    best, best_key = None, None
    for addr, _, body in insns:
        m = BRANCH.search(body)
        if not m or int(m.group(1), 16) >= addr:  # forward, or the padding's BRA to itself
            continue
        lo = int(m.group(1), 16)
        inside = [op for a, op, _ in insns if lo <= a <= addr]
        if any(op.startswith("EXIT") for op in inside):
            continue  # a jump back from cold code (an mbarrier's retry stub), not a loop
        tensor = sum(op.startswith(TENSOR) for op in inside)
        key = (tensor, -len(inside) if tensor else len(inside))
        if best_key is None or key > best_key:
            best, best_key = (lo, addr), key
    return best


def epilogue(insns, loop_end):
    """(instructions, global stores) after the loop, to the first EXIT."""
    after = [op for a, op, _ in insns if a > loop_end]
    end = next((i + 1 for i, op in enumerate(after) if op.startswith("EXIT")), len(after))
    return end, sum(op.startswith(("STG", "ST.E", "RED", "ATOM")) for op in after[:end])


def profile(path, fun):
    """(label, Counter of opcodes) of path's main loop."""
    with open(path, encoding="utf-8", errors="replace") as f:
        funcs = functions(f.read())
    for name, insns in funcs.items():
        if fun and fun not in name:
            continue
        loop = main_loop(insns)
        if loop:
            ops = Counter(op for a, op, _ in insns if loop[0] <= a <= loop[1])
            tensor = sum(n for op, n in ops.items() if op.startswith(TENSOR))
            tail, stores = epilogue(insns, loop[1])
            label = (f"{path} {name}: loop 0x{loop[0]:04x}-0x{loop[1]:04x}, "
                     f"{sum(ops.values())} instructions ({tensor} tensor); "
                     f"then {tail} to the first EXIT ({stores} global stores)")
            return label, ops
    raise SystemExit(f"sass_loops: {path}: no function{' ' + fun if fun else ''} with a loop")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sass", nargs="+", help="one or two cuobjdump -sass outputs")
    ap.add_argument("--fun", help="a substring of the function's name")
    opts = ap.parse_args()
    if len(opts.sass) > 2:
        ap.error("one or two files")
    runs = [profile(p, opts.fun) for p in opts.sass]
    for tag, (label, _) in zip("AB", runs):
        print(f"{tag}: {label}")
    a = runs[0][1]
    b = runs[1][1] if len(runs) > 1 else Counter()
    keys = sorted(set(a) | set(b), key=lambda k: (-abs(a[k] - b[k]), -a[k], k))
    width = max([len(k) for k in keys] + [6])
    if len(runs) == 1:
        for k in sorted(a, key=lambda k: (-a[k], k)):
            print(f"{k:<{width}} {a[k]:6d}")
        print(f"{'total':<{width}} {sum(a.values()):6d}")
        return
    print(f"{'opcode':<{width}} {'A':>6} {'B':>6} {'A-B':>6}")
    for k in keys:
        print(f"{k:<{width}} {a[k]:6d} {b[k]:6d} {a[k] - b[k]:+6d}")
    ta, tb = sum(a.values()), sum(b.values())
    print(f"{'total':<{width}} {ta:6d} {tb:6d} {ta - tb:+6d}")
    per = [sum(c.values()) / max(1, sum(n for op, n in c.items() if op.startswith(TENSOR)))
           for c in (a, b)]
    print(f"instructions per tensor instruction: A {per[0]:.2f}, B {per[1]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
