#!/usr/bin/env python3
"""C = A @ B.T in float16 with examples/matmul_v5.tls, from PyTorch.

    PYTHONPATH=python TLSC_LIB=build/runtime/libtlsrt.so \\
        python3 python/examples/matmul.py [M N K]

Compiles the script with tlsc (cached), loads it through libtlsrt, launches
on torch's current stream, checks against torch.matmul and times both with
CUDA events. Without a GPU (or torch) it shows the offline path: the launch
is checked by libtlsrt and the plan printed.
"""
import os
import sys

import tlsc

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "examples", "matmul_v5.tls")


def main():
    m, n, k = (int(x) for x in sys.argv[1:4]) if len(sys.argv) >= 4 else (4096, 4096, 4096)
    ptx = tlsc.compile(SCRIPT)  # cached by content under ~/.cache/tlsc/ptx
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if not gpu:
        mod = tlsc.load(ptx, offline=True)
        kernel = mod.MatmulWGMMAV5
        print(kernel)
        # pointers are only checked offline: any aligned addresses will do
        plan = kernel.prepare(m, n, k, 1 << 20, 1 << 30, 1 << 40)
        print("no GPU/torch here; the launch libtlsrt would make:", plan)
        return 0
    mod = tlsc.load(ptx)
    kernel = mod.MatmulWGMMAV5
    a = (torch.rand(m, k, dtype=torch.float16, device="cuda") - 0.5) / k ** 0.5
    b = (torch.rand(n, k, dtype=torch.float16, device="cuda") - 0.5) / k ** 0.5
    c = torch.empty(m, n, dtype=torch.float16, device="cuda")
    kernel(m, n, k, a, b, c)  # on torch.cuda.current_stream()
    ref = a.double() @ b.double().T
    err = ((c.double() - ref).norm() / ref.norm()).item()
    print(f"{kernel.name} on {mod.ctx.device_name}: rel_err {err:.2e} against float64")

    def time(fn, reps=20):
        fn()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / reps

    t_tlsc = time(lambda: kernel(m, n, k, a, b, c))
    t_torch = time(lambda: torch.matmul(a, b.T))
    flops = 2 * m * n * k
    print(f"tlsc {t_tlsc * 1e3:.1f} us ({flops / t_tlsc / 1e9:.0f} TFLOPS), "
          f"torch {t_torch * 1e3:.1f} us ({flops / t_torch / 1e9:.0f} TFLOPS)")
    return 0 if err < 2e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
