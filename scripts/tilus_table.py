#!/usr/bin/env python3
"""The table of Tilus's own example kernels against Tilus, in one command.

    python3 scripts/tilus_table.py --tilus TILUS_DIR --build BUILD [--only NAME,...]
        [--rounds N] [--timeout S] [--specialize] [--ncu NCU] [--logs DIR] [--out table.md]
    python3 scripts/tilus_table.py --check-only --tilus TILUS_DIR --build BUILD [--only ...]

On the GPU machine (torch, nvcc, Tilus's wheels installed as
docs/performance.md says): for each example file of TILUS_DIR/examples
listed below, BUILD/driver/tlsc compiles the file as shipped (plus the -D
values a user passes for its __init__), then scripts/kernels_check.py
checks every entry against torch in float64 at ragged sizes and at the
bench size (where the runtime runs the entries --specialize adds, so the
entry timed is the entry checked) and times the
fastest entry against Tilus compiling the same file, in one process,
interleaved, L2 flushed. Prints (and writes with --out) a markdown table:
the file, the checks, tlsc's and Tilus's times and their ratio. Tilus
compiles one kernel per value of an `int` parameter; with --specialize
tlsc does too for the matmuls' n_size and k_size (`tlsc --specialize`,
from the bench size), and the row times the specialised entry (the
runtime picks it for the bench size, the ragged check sizes run the
generic one) beside the generic one, in the same process. A file
that fails to compile, to check or to run is a row that says so. Tilus's
location is an argument: nothing of it is part of tlsc. --check-only
checks every entry of each file at its ragged sizes and times nothing
(Tilus's examples are read, Tilus is not run): it exits 1 when a file
fails to compile or to check, and the GPU suite runs it (scripts/gpu_suite.sh,
TILUS_CHECK_ALL=1), since a wrong entry that the tuner never picks shows
in no timing.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FA_D = ["-D", "dtype=float16", "-D", "num_heads=32", "-D", "num_heads_kv=8", "-D", "head_size=128"]
FA_INIT = "dtype=float16,num_heads=32,num_heads_kv=8,head_size=128"
A16_D = ["-D", "weight_tile=(16,16)", "-D", "a_dtype=float16", "-D", "b_dtype=int4b",
         "-D", "group_size=128"]
A16_INIT = "weight_tile=(16,16),a_dtype=float16,b_dtype=int4b,group_size=128"
# the other weight types of matmul_a16wx.py's own benchmark (int4b above)
A16_TYPES = ["float8_e5m2", "float6_e3m2", "float4_e2m1", "float3_e1m1", "int8", "int6b", "int3b"]


def a16wx_case(dtype):
    """matmul_a16wx.py compiled for weights of `dtype` (the case's rows say
    which: kernels_check's --a16wx-dtype)."""
    return ("quantization/matmul_a16wx.py", "a16wx", "QuantizedMatmul",
            [d.replace("int4b", dtype) for d in A16_D], A16_INIT.replace("int4b", dtype),
            "257x1040x1152", "4096x12288x4096", ["--a16wx-dtype", dtype])


# name: (file under examples/, case kind, class, tlsc -D args, Tilus __init__
#        arguments, check sizes, bench size, extra kernels_check options)
CASES = {
    # tlsc's own ladder (a path under @tlsc/ is in this repository), each
    # file valid Tilus Python, so both compilers take it as it is
    "ladder_v1": ("@tlsc/examples/matmul_v1.tls", "matmul", "MatmulWGMMAV1", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "ladder_v3": ("@tlsc/examples/matmul_v3.tls", "matmul", "MatmulWGMMAV3", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "ladder_v4": ("@tlsc/examples/matmul_v4.tls", "matmul", "MatmulWGMMAV4", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "ladder_v5": ("@tlsc/examples/matmul_v5.tls", "matmul", "MatmulWGMMAV5", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "ladder_v7": ("@tlsc/examples/matmul_v7.tls", "matmul", "MatmulV7", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "hopper_v0": ("hopper_matmul/matmul_v0.py", "matmul", "MatmulTMA", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "hopper_v1": ("hopper_matmul/matmul_v1.py", "matmul", "MatmulWGMMA", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "hopper_v2": ("hopper_matmul/matmul_v2.py", "matmul", "MatmulWGMMAV2", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "hopper_v3": ("hopper_matmul/matmul_v3.py", "matmul", "MatmulWGMMAV3", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "hopper_v4": ("hopper_matmul/matmul_v4.py", "matmul", "MatmulWGMMAV4", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "hopper_v5": ("hopper_matmul/matmul_v5.py", "matmul", "MatmulWGMMAV5", [], "",
                  "1000x1016x1032,257x256x264", "8192x8192x8192", []),
    "ampere_v0": ("matmul/matmul_v0.py", "matmul_kn", "MatmulV0", [], "",
                  "1000x1016x1032,257x251x259", "4096x4096x4096", []),
    "ampere_v1": ("matmul/matmul_v1.py", "matmul_kn", "MatmulV1", [], "",
                  "1000x1016x1032,257x251x259", "4096x4096x4096", []),
    "ampere_v2": ("matmul/matmul_v2.py", "matmul_kn", "MatmulV2", [], "",
                  "1000x1016x1032,257x251x259", "4096x4096x4096", []),
    "ampere_v3": ("matmul/matmul_v3.py", "matmul_kn", "MatmulV3", [], "",
                  "1000x1016x1032,257x251x259", "4096x4096x4096", []),
    "ampere_v4": ("matmul/matmul_v4.py", "matmul_kn", "MatmulV4", [], "",
                  "1000x1016x1032,257x251x259", "4096x4096x4096", []),
    "ampere_v5": ("matmul/matmul_v5.py", "matmul_kn", "MatmulV5", [], "",
                  "1000x1016x1032,257x251x259", "4096x4096x4096", []),
    # the file's second workload, where its split-K space is for
    "ampere_v5_k14336": ("matmul/matmul_v5.py", "matmul_kn", "MatmulV5", [], "",
                         "1000x1016x1032,257x251x259", "4096x4096x14336", []),
    "softmax": ("softmax/softmax.py", "softmax", "FusedSoftmax", [], "",
                "3x781,257x1000,4096x1024", "8192x8192", ["--padded-ref"]),
    "layer_norm": ("norm/layer_norm.py", "layer_norm", "LayerNorm", [], "",
                   "3x781,257x1000,4096x1024", "8192x8192", []),
    "flash_attention_v1": ("attention/flash_attention_v1.py", "attention", "FlashAttention", FA_D,
                           FA_INIT, "2x200,1x1024", "4x4096", []),
    "flash_attention_v2": ("attention/flash_attention_v2.py", "attention", "FlashAttention", FA_D,
                           FA_INIT, "2x200,1x1024", "4x4096", []),
    "flash_attention_v3": ("attention/flash_attention_v3.py", "attention_kv", "FlashAttention",
                           FA_D, FA_INIT, "2x200,1x1024", "4x4096", []),
    "attention_with_kvcache": ("attention_with_kvcache/attention_v1.py", "kvcache",
                               "AttentionWithKVCache", ["-D", "head_size=128"], "head_size=128",
                               "1x128x1000,2x1x700", "1x4096x4096", []),
    "per_token_cast": ("quantization/per_token_cast.py", "per_token_cast", "PerTokenCast", [],
                       "", "1x128,257x4096", "8192x7168", []),
    "swiglu_cast": ("quantization/swiglu_forward_and_per_token_cast.py", "swiglu_cast",
                    "SwiGLUForwardAndPerTokenCast", [], "", "1x128,257x4096", "8192x7168", []),
    "matmul_a16wx": ("quantization/matmul_a16wx.py", "a16wx", "QuantizedMatmul", A16_D, A16_INIT,
                     "257x1040x1152", "4096x12288x4096", []),
    **{f"matmul_a16wx_{t}": a16wx_case(t) for t in A16_TYPES},
}

BENCH = re.compile(r"^bench \S+ \S+ \[(?P<entry>[^\]]*)\]: tlsc (?P<tlsc>[0-9.]+) us")
TILUS = re.compile(r" tilus (?P<tilus>[0-9.]+) us")
GENERIC = re.compile(r" generic (?P<generic>[0-9.]+) us")
# the case kinds whose `int` parameters n_size and k_size --specialize fixes
# (a kernels_check size is MxNxK for them)
SPECIALIZED_KINDS = ("matmul", "matmul_kn", "a16wx")


def specialize_args(kind, bench):
    """tlsc's --specialize options for the bench size, or [] for none."""
    if kind not in SPECIALIZED_KINDS:
        return []
    _, n, k = bench.split("x")
    return ["--specialize", f"n_size={n}", "--specialize", f"k_size={k}"]


# ncu (--ncu): the metrics of one launch of each timed kernel, and the
# tensor instruction a matmul's work is counted in (warp-level: a
# m64n256k16 HGMMA is 4 warp instructions of 64*256*16 multiply-adds, a
# m16n8k16 HMMA one of 16*8*16)
NCU_METRICS = ("gpu__time_duration.sum,smsp__inst_executed.sum,"
               "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,"
               "launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,"
               "launch__grid_size,launch__block_size,launch__shared_mem_per_block,"
               "dram__throughput.avg.pct_of_peak_sustained_elapsed")
TENSOR_UNIT = {"matmul": ("HGMMA m64n256k16", 64 * 256 * 16 // 4),
               "matmul_kn": ("HMMA m16n8k16", 16 * 8 * 16), "a16wx": ("HMMA m16n8k16", 16 * 8 * 16)}
PROFILE = re.compile(r"^profile \S+ \S+: (?P<run>\S+)$")


def case_source(rel, opts):
    """A case's file: under Tilus's examples, or (@tlsc/) in this repository."""
    if rel.startswith("@tlsc/"):
        return os.path.join(HERE, "..", rel[len("@tlsc/"):])
    return os.path.join(opts.tilus, "examples", rel)


def ncu_records(out):
    """(run label, {metric: value}) for each kernel ncu profiled: the runs
    are named by kernels_check's 'profile' lines, in order, and each starts
    with a marker record (spin_kernel); ncu's CSV (--page raw: a header, a
    units row, a row per kernel) holds the records in launch order."""
    labels = [m["run"] for m in map(PROFILE.match, out.splitlines()) if m]
    rows = list(csv.reader(line for line in out.splitlines() if line.startswith('"')))
    header = next((r for r in rows if r and r[0] == "ID"), None)
    if not header:
        return []
    records, run = [], -1
    for r in rows:
        if len(r) != len(header) or not r[0].isdigit():
            continue
        rec = dict(zip(header, r))
        if "spin_kernel" in rec.get("Kernel Name", ""):
            run += 1
        elif 0 <= run < len(labels):
            records.append((labels[run], rec))
    return records


def ncu_rows(rel, kind, bench, out):
    """The --ncu table's rows of one case."""
    rows = []
    unit = TENSOR_UNIT.get(kind)
    macs = 1
    for d in bench.split("x"):
        macs *= int(d)
    def number(rec, metric):  # ncu may print thousands separators
        return float(rec.get(metric, "nan").replace(",", ""))

    for label, rec in ncu_records(out):
        inst = number(rec, "smsp__inst_executed.sum")
        per = f"{inst / (macs / unit[1]):.2f}" if unit else ""
        rows.append([rel, label, rec.get("Kernel Name", "")[:48],
                     f"{number(rec, 'gpu__time_duration.sum') / 1e3:.1f} us",
                     f"{inst / 1e6:.2f} M", per,
                     rec.get("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", ""),
                     rec.get("launch__registers_per_thread", ""),
                     rec.get("sm__warps_active.avg.pct_of_peak_sustained_active", ""),
                     f"{rec.get('launch__grid_size', '')} x {rec.get('launch__block_size', '')}",
                     rec.get("launch__shared_mem_per_block", ""),
                     rec.get("dram__throughput.avg.pct_of_peak_sustained_elapsed", "")])
    return rows


def check_command(case_spec, src, ptx, compare, opts):
    """kernels_check.py's command line for a case (CASES' tuple) compiled
    into ptx from src: its entries checked at the case's ragged sizes and
    at the bench size, then the fastest timed against Tilus compiling src;
    with --check-only, the ragged sizes alone and no Tilus (every entry,
    nothing timed: what the GPU suite runs, TILUS_CHECK_ALL)."""
    _, kind, cls, _, init, checks, bench, extra = case_spec
    cmd = [sys.executable, os.path.join(HERE, "kernels_check.py"),
           "--lib", os.path.join(opts.build, "runtime", "libtlsrt.so"),
           "--case", f"{kind}:{ptx}:{cls}", *compare]
    if opts.check_only:
        return cmd + ["--check-sizes", checks, *extra]
    if bench not in checks.split(","):  # the size timed is a size checked
        checks = f"{checks},{bench}"
    tilus = f"{kind}:{src}:{cls}" + (f":{init}" if init else "")
    return cmd + ["--tilus", tilus, "--check-sizes", checks, "--bench", "--bench-sizes", bench,
                  "--rounds", str(opts.rounds), *extra]


def check_verdict(out):
    """'N checks, M failed' of kernels_check's output, and M (None when no
    check ran)."""
    checks = [line for line in out.splitlines() if line.startswith("check ")]
    failed = [line for line in checks if line.endswith("FAIL")]
    if not checks:
        return "no check ran", None
    return f"{len(checks)} checks, {len(failed)} failed", len(failed)


def run_case(name, spec, opts, workdir):
    """One row: compile, check, bench; the row's cells, and the --ncu rows."""
    rel, kind, cls, defines, init, checks, bench, extra = spec
    src = case_source(rel, opts)
    if "--a16wx-dtype" in extra:  # rows of one file, one per weight type
        rel = f"{rel} ({extra[extra.index('--a16wx-dtype') + 1]})"
    ptx = os.path.join(workdir, name + ".ptx")
    tlsc = os.path.join(opts.build, "driver", "tlsc")
    comp = subprocess.run([tlsc, *defines, src, "-o", ptx], capture_output=True, text=True)
    if comp.returncode:
        return [rel, "does not compile: " + comp.stderr.splitlines()[0], "", "", "", ""], []
    case, compare = ptx, []
    spec_args = specialize_args(kind, bench) if opts.specialize else []
    if spec_args:
        case = os.path.join(workdir, name + "_specialized.ptx")
        comp = subprocess.run([tlsc, *defines, *spec_args, src, "-o", case], capture_output=True,
                              text=True)
        if comp.returncode:
            return [rel, "does not compile specialised: " + comp.stderr.splitlines()[0], "", "",
                    "", ""], []
        compare = ["--compare", f"generic={ptx}"]
    cmd = check_command(spec, src, case, compare, opts)
    if opts.ncu:
        cmd = [opts.ncu, "--profile-from-start", "off", "--clock-control", "none", "--csv",
               "--page", "raw", "--print-units", "base", "--metrics", NCU_METRICS, *cmd, "--profile"]
    try:
        # one stream: the checks, the 'profile' lines and ncu's CSV together
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=opts.timeout)
        out = res.stdout
        if opts.logs:
            with open(os.path.join(opts.logs, name + ".log"), "w") as f:
                f.write(" ".join(cmd) + "\n" + out)
    except subprocess.TimeoutExpired:
        return [rel, f"timed out after {opts.timeout} s", "", "", "", ""], []
    verdict, nfailed = check_verdict(out)
    if opts.check_only:
        return [rel, verdict + ("" if nfailed == 0 else "; " + (out.strip().splitlines()[-1:]
                                                                or ["no output"])[0][:120]),
                "", "", "", ""], []
    line = next((line for line in out.splitlines() if BENCH.match(line)), None)
    if not line:
        tail = out.strip().splitlines()[-1:] or ["no output"]
        return [rel, verdict + "; no timing: " + tail[0][:120], "", "", "", ""], []
    m, mt, mg = BENCH.match(line), TILUS.search(line), GENERIC.search(line)
    t, ti = float(m["tlsc"]), mt and float(mt["tilus"])
    ratio = f"{ti / t:.3f}x" if ti else "(Tilus did not run)"
    generic = ""
    if mg:  # the specialised entry above, the generic one here
        tg = float(mg["generic"])
        generic = f"{tg:.1f} us" + (f" ({ti / tg:.3f}x)" if ti else "")
    return [rel, verdict, f"{t:.1f} us [{m['entry']}]", f"{ti:.1f} us" if ti else "", ratio,
            generic], ncu_rows(rel, kind, bench, out) if opts.ncu else []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilus", help="a Tilus checkout (examples/, python/); required but for --list")
    ap.add_argument("--build", help="a Release build folder of tlsc; required but for --list")
    ap.add_argument("--only", help="comma-separated case names (default: all)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per file")
    ap.add_argument("--specialize", action="store_true",
                    help="time the matmuls specialised on the bench size's n and k too")
    ap.add_argument("--ncu", metavar="NCU",
                    help="run each file under this ncu and add a table of one launch of each "
                         "timed kernel: time, warp instructions (per tensor instruction for "
                         "the matmuls), tensor pipe, registers, occupancy, launch shape, DRAM")
    ap.add_argument("--logs", metavar="DIR", help="keep each file's command and output there")
    ap.add_argument("--out", help="also write the table there")
    ap.add_argument("--list", action="store_true", help="list the case names and exit")
    ap.add_argument("--check-only", action="store_true",
                    help="check every entry of each file at its ragged sizes, time nothing, "
                         "run no Tilus (--tilus: where its examples are); exit status 0 when "
                         "every file compiles and passes, 3 when no check could run (no GPU "
                         "or torch), else 1")
    opts = ap.parse_args()
    if opts.list:
        print("\n".join(CASES))
        return 0
    if not opts.tilus or not opts.build:
        ap.error("--tilus and --build are required (but for --list)")
    names = opts.only.split(",") if opts.only else list(CASES)
    if opts.logs:
        os.makedirs(opts.logs, exist_ok=True)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error("unknown case(s): " + ", ".join(unknown) + " (--list shows them)")
    rows = ["| file | checks | tlsc | Tilus | tlsc speed-up over Tilus | tlsc generic entry |",
            "|---|---|---|---|---|---|"]
    prof = ["| file | run | kernel | time | warp instructions | per tensor instruction | "
            "tensor pipe % | registers | warps active % | grid x block | shared bytes | DRAM % |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    bad = unchecked = 0
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            row, ncu = run_case(name, CASES[name], opts, work)
            bad += not row[1].endswith(" 0 failed")
            unchecked += row[1].startswith("no check ran")
            rows.append("| " + " | ".join(row) + " |")
            print(rows[-1], flush=True)
            for r in ncu:
                prof.append("| " + " | ".join(r) + " |")
                print(prof[-1], flush=True)
    if opts.ncu:
        unit = ", ".join(f"{k}: {u[0]}" for k, u in TENSOR_UNIT.items())
        rows += ["", f"ncu, one launch of each (tensor instructions counted as: {unit}):", ""]
        rows += prof
    if opts.out:
        with open(opts.out, "w") as f:
            f.write("\n".join(rows) + "\n")
    print("\n".join(rows))
    if not opts.check_only:
        return 0
    return 3 if unchecked == len(names) else 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
