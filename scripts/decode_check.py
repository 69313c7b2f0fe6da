#!/usr/bin/env python3
"""Checks and times tlsc's build of Tilus's flash_attention_decode example
(three kernels: GDN gating, the recurrent gated delta-rule update, and the
two fused) on the GPU, against the example's own torch reference and,
with --tilus, against Tilus compiling the same file.

    tlsc DIR/tilus_kernel.py -D K=128 -D V=128 -o decode.ptx
    python3 scripts/decode_check.py --lib build/runtime/libtlsrt.so \
        --ptx decode.ptx --example DIR [--tilus] [--bench]

Tilus compiles the kernels with every `int` and `bool` parameter a
constant; the same with tlsc adds specialised entries, which libtlsrt
launches when the arguments match (the shapes below use these values):

    tlsc DIR/tilus_kernel.py -D K=128 -D V=128 --specialize B=1 \
        --specialize H=4 --specialize HV=8 --specialize MAX_T=129 \
        --specialize USE_INITIAL_STATE=1 \
        --specialize USE_QK_L2NORM_IN_KERNEL=1 -o decode.ptx

DIR is the example's folder (tilus_kernel.py, torch_kernel.py): the
references come from its torch_kernel.py, imported from there at run time.
Every autotune entry runs on fresh random data, outputs poisoned first, the
state it updates in place a fresh copy each time; the output and the
updated state are compared with the reference by relative error. --bench
times the fastest entry (tls_autotune_ex, each run after an L2 flush, as
timed) against torch's and Tilus's in interleaved rounds with an L2 flush
before each call (medians). Exits 3
without torch or a GPU, 1 when a check fails. --entries also times
every entry of each script on the same protocol (the tuner's choice at a
few microseconds is noisy); --tilus-cache DIR keeps Tilus's generated
CUDA, cubins and dispatch tables (which program its tuning chose) there.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# kernels_check exits 3 without torch (a skip)
from kernels_check import Runtime, StandIn, Timer, poison_tensors, rel_err  # noqa: E402

import torch  # noqa: E402

SHAPES = [(1, 1), (1, 7), (1, 32), (1, 128)]  # (B, T); H=4, K=128, HV=8, V=128 as in the example
BENCH_SHAPES = [(1, 1), (1, 32), (1, 128)]
H, K, HV, V, SLOTS = 4, 128, 8, 128, 129


def gating_case(ref, batch, heads):
    a_log = torch.randn(heads, device="cuda") * 0.1
    a = torch.randn(batch, heads, device="cuda", dtype=torch.bfloat16)
    dt_bias = torch.randn(heads, device="cuda") * 0.1
    g = torch.empty(batch, heads, device="cuda")
    expect = ref.fused_gdn_gating_torch(a_log.double(), a.double(), dt_bias.double(), 1.0, 20.0)
    return dict(args=[g, a_log, a, dt_bias, batch, heads, 1.0, 20.0], outs=[g], expect=[expect],
                state=None, tol=1e-5,
                torch=lambda: ref.fused_gdn_gating_torch(a_log, a, dt_bias, 1.0, 20.0))


def delta_inputs(batch, steps):
    q = torch.randn(batch, steps, H, K, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(batch, steps, H, K, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(batch, steps, HV, V, device="cuda", dtype=torch.bfloat16)
    state = torch.randn(SLOTS, HV, K, V, device="cuda") * 0.1
    indices = (SLOTS - 3 - torch.arange(steps, device="cuda", dtype=torch.int32)).contiguous()
    return q, k, v, state, indices


def delta_case(ref, batch, steps):
    q, k, v, state, indices = delta_inputs(batch, steps)
    g = torch.randn(batch, steps, HV, device="cuda") * 0.1
    beta = torch.rand(batch, steps, HV, device="cuda", dtype=torch.bfloat16) * 0.5 + 0.5
    scale = K**-0.5
    state_ref = state.double().clone()
    expect = ref.fused_recurrent_gated_delta_rule_update_fwd_torch(
        q.double(), k.double(), v.double(), g.double(), beta.double(), scale, state_ref,
        indices, use_qk_l2norm_in_kernel=True)
    o = torch.empty_like(v)
    args = [q, k, v, g, o, beta, scale, None, indices, steps, batch, H, HV, K, V, SLOTS,
            True, True]
    return dict(args=args, outs=[o], expect=[expect], state=(state, state_ref), tol=1e-2,
                torch=None)  # the reference is a Python loop: nothing to time


def fused_case(ref, batch, steps):
    q, k, v, state, indices = delta_inputs(batch, steps)
    a_log = torch.randn(HV, device="cuda") * 0.1
    a = torch.randn(steps, HV, device="cuda", dtype=torch.bfloat16)
    dt_bias = torch.randn(HV, device="cuda") * 0.1
    b = torch.randn(steps, HV, device="cuda", dtype=torch.bfloat16)
    scale = K**-0.5
    state_ref = state.double().clone()
    expect = ref.sigmoid_gating_delta_rule_update_torch(
        a_log.double(), a.double(), dt_bias.double(), 1.0, 20.0, q.double(), k.double(),
        v.double(), b.double(), scale, state_ref, indices, use_qk_l2norm_in_kernel=True)
    o = torch.empty_like(v)
    args = [a_log, a, dt_bias, 1.0, 20.0, q, k, v, b, o, scale, None, indices, steps, batch, H,
            HV, K, V, SLOTS, True, True]
    return dict(args=args, outs=[o], expect=[expect], state=(state, state_ref), tol=1e-2,
                torch=None)


CASES = {"FusedGdnGatingKernel": (gating_case, [(1, 8), (3, 37), (8, 128)], [(8, 128)]),
         "FusedRecurrentGatedDeltaRuleUpdateFwdKernel": (delta_case, SHAPES, BENCH_SHAPES),
         "FusedSigmoidGatingDeltaRuleUpdateKernel": (fused_case, SHAPES, BENCH_SHAPES)}


def bind(case, state):
    """The case's arguments with the state buffer (updated in place) put in
    the slot that holds None."""
    return [state if a is None else a for a in case["args"]]


def run_entry(rt, k, case):
    """Launches one entry on a fresh copy of the state and returns the
    worst relative error over its outputs and the state it updates."""
    poison_tensors(*case["outs"])
    state = case["state"][0].clone() if case["state"] else None
    rt.launch(k, rt.args(k, bind(case, state)))
    torch.cuda.synchronize()
    errs = [rel_err(out, exp) for out, exp in zip(case["outs"], case["expect"])]
    if state is not None:
        errs.append(rel_err(state, case["state"][1]))
    return max(errs)


def import_example(folder, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench(rt, mod, script, case, tilus_mod, rounds, timer, entries=False):
    state = case["state"][0].clone() if case["state"] else None
    arr_args = bind(case, state)
    kernels = rt.kernels(mod, script)
    best, _ = rt.autotune(mod, script, rt.args(kernels[0], arr_args))
    arr = rt.args(best, arr_args)
    runs = {"tlsc": lambda: rt.launch(best, arr)}
    if entries:  # every entry beside the tuner's choice, on the same protocol
        for k in kernels:
            runs[rt.lib.tls_kernel_name(k).decode()] = (
                lambda k=k, a=rt.args(k, arr_args): rt.launch(k, a))
    if case["torch"]:
        runs["torch"] = case["torch"]
    if tilus_mod is not None:
        # the same class from the same file, compiled by Tilus (it tunes
        # on its first call, the warm-up below), on its own state copy
        kernel = getattr(tilus_mod, script)()
        tilus_args = bind(case, state.clone() if state is not None else None)
        runs["tilus"] = lambda: kernel(*tilus_args)
    for fn in runs.values():
        fn()
    torch.cuda.synchronize()
    times = {key: [] for key in runs}
    for _ in range(rounds):
        for key, fn in runs.items():
            times[key].append(timer.time(fn))
    med = {key: statistics.median(v) for key, v in times.items()}
    line = " ".join(f"{key} {ms * 1e3:.1f} us" for key, ms in med.items())
    ratios = " ".join(f"over {key} {med[key] / med['tlsc']:.3f}x" for key in med if key != "tlsc")
    return f"[{rt.lib.tls_kernel_name(best).decode()}]: {line}; tlsc speed-up {ratios}"


def main():
    if not torch.cuda.is_available():
        print("decode_check: no CUDA device", file=sys.stderr)
        sys.exit(3)
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--ptx", required=True)
    ap.add_argument("--example", required=True, help="the flash_attention_decode folder")
    ap.add_argument("--tilus", action="store_true", help="time Tilus on the same file too")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--entries", action="store_true",
                    help="--bench times every entry of a script too, not only the tuner's")
    ap.add_argument("--tilus-cache", metavar="DIR",
                    help="Tilus's cache folder (its generated CUDA, cubins and dispatch tables)")
    opts = ap.parse_args()
    if opts.tilus and opts.tilus_cache:
        import tilus as tilus_pkg
        tilus_pkg.option.cache_dir(opts.tilus_cache)
    sys.path.insert(0, opts.example)
    for host_only in ("pandas", "triton", "fla"):
        sys.meta_path.append(StandIn(host_only))
    ref = import_example(opts.example, "torch_kernel")
    tilus_mod = import_example(opts.example, "tilus_kernel") if opts.tilus else None
    rt = Runtime(opts.lib)
    mod = rt.load(opts.ptx)
    failures = 0
    timer = Timer()
    for script, (make, shapes, bench_shapes) in CASES.items():
        kernels = rt.kernels(mod, script)
        if not kernels:
            raise SystemExit(f"{opts.ptx}: no entry of script {script}")
        for shape in shapes:
            case = make(ref, *shape)
            errs = [(run_entry(rt, k, case), rt.lib.tls_kernel_name(k).decode()) for k in kernels]
            worst, name = max(errs)
            ok = worst <= case["tol"]
            failures += not ok
            print(f"check {script} {shape}: {len(kernels)} entries, worst rel_err {worst:.2e} "
                  f"{name} {'ok' if ok else 'FAIL'}", flush=True)
        if opts.bench:
            for shape in bench_shapes:
                case = make(ref, *shape)
                print(f"bench {script} {shape} "
                      f"{bench(rt, mod, script, case, tilus_mod, opts.rounds, timer, opts.entries)}",
                      flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
