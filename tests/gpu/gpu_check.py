"""What every tests/gpu/*_check.py does first: import torch, read --lib,
--ptx and --rounds, load the PTX through the tlsc Python package of this
checkout. Exits 3 (a skip under tests/gpu/run_or_skip.sh) without torch
or a GPU."""
import argparse
import os
import sys


def setup(name, rounds):
    """(torch, options, module) for the check `name`; `rounds` is the
    default of --rounds."""
    try:
        import torch
    except ImportError:
        print(f"{name}: no torch here", file=sys.stderr)
        sys.exit(3)
    ap = argparse.ArgumentParser(prog=name)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--ptx", required=True)
    ap.add_argument("--rounds", type=int, default=rounds)
    opts = ap.parse_args()
    if not torch.cuda.is_available():
        print(f"{name}: no GPU", file=sys.stderr)
        sys.exit(3)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    import tlsc

    return torch, opts, tlsc.load(opts.ptx, lib=opts.lib)


def run_rounds(name, rounds, check_round):
    """setup(name, rounds), then check_round(torch, module, rnd) for each
    round after torch.manual_seed(rnd) (it prints its own lines and returns
    whether they passed); exits 0 when every round passed, else 1."""
    torch, opts, mod = setup(name, rounds)
    ok = True
    for rnd in range(opts.rounds):
        torch.manual_seed(rnd)
        ok = check_round(torch, mod, rnd) and ok
    sys.exit(0 if ok else 1)
