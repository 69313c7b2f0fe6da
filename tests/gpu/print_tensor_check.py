#!/usr/bin/env python3
"""Runs tests/gpu/kernels/print_tensor.tls (compiled by tlsc) on the GPU
and compares what the device prints, byte for byte, with the text Tilus's
format gives for the same values (the message, a header, the elements row
by row in brackets, dimensions of size 1 dropped). The device's printf
goes to file descriptor 1, captured in a temporary file around the launch.

    python3 tests/gpu/print_tensor_check.py --lib build/runtime/libtlsrt.so \\
        --ptx print_tensor.ptx

Exits 3 without torch or a GPU (a skip under tests/gpu/run_or_skip.sh), 1
when a check fails.
"""
import os
import sys
import tempfile

from gpu_check import run_rounds


def rows(header, values, fmt):
    """Tilus's layout of a list of rows (a 2-D tensor)."""
    out = [header]
    for r, row in enumerate(values):
        line = ("[[" if r == 0 else " [") if len(values) > 1 else "["
        line += ", ".join(fmt % v for v in row)
        line += ("]]" if r == len(values) - 1 else "]") if len(values) > 1 else "]"
        out.append(line)
    return "\n".join(out) + "\n"


def expected(x):
    text = rows("x: register_tile(dtype=float32, shape=[4, 8])", x, "%6.3f")
    text += rows("n = 100%: register_tile(dtype=int32, shape=[2, 30])",
                 [[i * 100 - j for j in range(30)] for i in range(2)], "%d")
    text += rows("register_tile(dtype=bool, shape=[1, 5])", [[int(j % 2 == 0) for j in range(5)]],
                 "%1d")
    text += rows("s: shared_tile(dtype=float16, shape=[2, 4])",
                 [[i + j * 0.5 for j in range(4)] for i in range(2)], "%5.2f")
    return text


def check_round(torch, mod, rnd):
    x = torch.randn(4, 8, device="cuda")
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as cap:
        os.dup2(cap.fileno(), 1)
        try:
            mod.PrintTensor(x)
            torch.cuda.synchronize()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        cap.seek(0)
        got = cap.read().decode()
    want = expected(x.cpu().tolist())
    good = got == want
    print(f"round {rnd} print_tensor output: {'PASS' if good else 'FAIL'}")
    if not good:
        print("--- got\n" + got + "--- want\n" + want)
    return good


if __name__ == "__main__":
    run_rounds("print_tensor_check", 2, check_round)
