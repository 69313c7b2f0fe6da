#!/usr/bin/env python3
"""Host overhead of a launch from Python: tlsc (through libtlsrt by
ctypes) against torch.matmul, on the same small matmul so that the GPU
time is negligible and the CPU time per call is what is measured.

    PYTHONPATH=python TLSC_LIB=build/runtime/libtlsrt.so \\
        python3 python/examples/launch_overhead.py [--iters 20000] [--size 128]

Needs a GPU and torch. For each way of calling it times N back-to-back
calls on the CPU (time.perf_counter, then one synchronize outside the
timed loop counted separately) and prints microseconds per call:
  - torch.matmul(a, b.T, out=c)
  - kernel(m, n, k, a, b, c): the full path (argument conversion, dtype,
    device and contiguity checks, bounds declared to libtlsrt, tls_launch)
  - the same with kernel.check_bounds = False
  - kernel.launch_raw(args): a prepared tls_arg array, tls_launch only
  - the op registered by tlsc.torch_op (allocation + dispatcher + launch)
"""
import argparse
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--size", type=int, default=128, help="M = N = 2*K (a tile multiple)")
    opts = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("launch_overhead: needs torch", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("launch_overhead: needs a CUDA device", file=sys.stderr)
        return 3
    import os

    import tlsc
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                          "matmul_v5.tls")
    mod = tlsc.load(script)
    kernel = mod.MatmulWGMMAV5
    m = n = opts.size
    k = opts.size // 2
    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(n, k, dtype=torch.float16, device="cuda")
    c = torch.empty(m, n, dtype=torch.float16, device="cuda")
    raw = kernel.arguments(m, n, k, a, b, c)
    stream = torch.cuda.current_stream().cuda_stream
    op = tlsc.torch_op("tlsc_bench::matmul_nt", kernel,
                       output=lambda a, b: ((a.shape[0], b.shape[0]), a.dtype),
                       args=lambda a, b, c: (a.shape[0], b.shape[0], a.shape[1], a, b, c))

    def no_bounds():
        kernel.check_bounds = False
        kernel(m, n, k, a, b, c)
        kernel.check_bounds = True

    calls = {
        "torch.matmul(out=)": lambda: torch.matmul(a, b.T, out=c),
        "tlsc kernel(...)": lambda: kernel(m, n, k, a, b, c),
        "tlsc kernel(...), no bounds": no_bounds,
        "tlsc launch_raw": lambda: kernel.launch_raw(raw, stream),
        "tlsc torch_op": lambda: op(a, b),
    }
    for fn in calls.values():  # warm-up: compile, encode and cache the maps
        for _ in range(100):
            fn()
    torch.cuda.synchronize()
    results = {name: [] for name in calls}
    for _ in range(opts.rounds):
        for name, fn in calls.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(opts.iters):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            results[name].append((t1 - t0) / opts.iters * 1e6)
    base = statistics.median(results["torch.matmul(out=)"])
    for name, us in results.items():
        med = statistics.median(us)
        print(f"{name:32s} {med:7.2f} us/call  ({med / base:.2f}x torch.matmul)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
