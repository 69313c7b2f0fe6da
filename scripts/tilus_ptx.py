#!/usr/bin/env python3
"""tilus_ptx.py: Tilus's kernel, as a tlsc PTX file libtlsrt can launch.

    python3 scripts/tilus_ptx.py --cu PROGRAM.cu --like TLSC.ptx --entry ENTRY \\
        [--at NAME=VALUE,...] -o tilus.ptx [--nvcc nvcc] [--keep-cu DIR]
    python3 scripts/tilus_ptx.py --programs CACHE

A measuring tool. When tlsc's kernel and Tilus's differ in speed on the
same script, the difference can be the code or the way each is launched
(Tilus's runtime, a memset of a workspace, the order of a benchmark). This
puts Tilus's own code on tlsc's side: from the CUDA source Tilus generated
for a program (`scripts/tilus_sass.sh` keeps it: tilus/<program>.cu), it
drops the host code (Tilus's launcher and its FFI), compiles the device
code with nvcc -ptx, and writes it after the metadata of the tlsc entry
that runs the same script (`--like`, `--entry`: its parameters, grid and
workspaces; its `fixed` values, which Tilus compiled in; its config
becomes `origin=tilus program=NAME`, since the program may be another
point of the autotune space with the same launch). The kernel is
renamed tilus_ENTRY and its parameters follow the entry's: Tilus's kernel
takes no `int` parameter it compiled in (`fixed`), so those become unused
parameters, and the others are Tilus's in order, workspaces last. Dynamic
shared memory is Tilus's launch's. Then

    python3 scripts/kernels_check.py ... --case KIND:TLSC.ptx:SCRIPT \\
        --compare tilusptx=tilus.ptx [--tilus ...]

times tlsc's entry, Tilus's code launched by libtlsrt, and Tilus itself in
one process. Refused (exit 2, a message): programs with more than one
kernel or launch, kernels with tensor-map parameters, parameter lists
that do not line up, and launches whose threads or grid are not the
entry's (Tilus builds a program per autotune point; only the entry's
point matches). kernels_check.py checks a --compare module's result
before it times it.

`--at` takes the program's autotune point: the entry becomes ENTRY's
sibling at that point (the entry with the same name but for the point,
whose `config` holds those values), so that each of Tilus's programs goes
under tlsc's entry of its own point. `--programs CACHE` lists the
programs of a Tilus cache (`tilus.option.cache_dir`, as kernels_check.py
--tilus-cache leaves it): for each, its folder, its index in the script's
tuning, its point (NAME=VALUE,...), its latency in the tuning and whether
the dispatch table chose it, one program a line:

    HASH INDEX LATENCY_MS chosen|- NAME=VALUE,...
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HEADERS = ["#include <stdint.h>", "#include <cuda_fp16.h>", "#include <cuda_bf16.h>",
           "#include <cuda_fp8.h>", "#include <cooperative_groups.h>", "#include <cuda.h>"]


def fail(msg):
    print(f"tilus_ptx.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def top_level_items(text):
    """The source's top-level items: (kind, text), kind 'include', 'global'
    (a __global__ function), 'device' (a __device__ function), 'host'
    (everything else with a body, and Tilus's FFI export lines)."""
    lines = text.split("\n")
    items, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("#include"):
            items.append(("include", line))
            i += 1
            continue
        start, depth, seen = i, 0, False
        while i < len(lines):  # to the end of the statement or of the body
            depth += lines[i].count("{") - lines[i].count("}")
            seen = seen or "{" in lines[i]
            i += 1
            if (seen and depth == 0) or (not seen and lines[i - 1].rstrip().endswith(";")):
                break
        item = "\n".join(lines[start:i])
        head = item.split("(", 1)[0]
        kind = "global" if "__global__" in head else "device" if "__device__" in head else "host"
        items.append((kind, item))
    return items


def device_source(text):
    """The device code of a Tilus program: the CUDA headers, its device
    functions, then its one kernel as extern "C" (kept by name in the PTX)."""
    items = top_level_items(text)
    kernels = [t for k, t in items if k == "global"]
    if len(kernels) != 1:
        fail(f"the program has {len(kernels)} __global__ kernels; one is supported")
    kernel = re.sub(r"^static\s+__global__", 'extern "C" __global__', kernels[0])
    # the name before the parameter list, past __cluster_dims__(...) and the like
    name = next(n for n in re.findall(r"(\w+)\s*\(", kernel.split("{", 1)[0])
                if not n.startswith("__"))
    device = [t for k, t in items if k == "device"]
    return "\n".join(HEADERS + [""] + device + ["", kernel, ""]), name


def split_top(text):
    """'a, f(b, c), d=[1, 2]' -> ['a', 'f(b, c)', 'd=[1, 2]']"""
    depth, out, cur = 0, [], ""
    for ch in text:
        depth += (ch in "([") - (ch in ")]")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()]


def program_launch(text, kernel):
    """The program's one launch of `kernel`: its grid (three C
    expressions), threads per block and dynamic shared memory."""
    launches = re.findall(rf"\b{kernel}<<<(.*?)>>>", text)
    if len(launches) != 1:
        fail(f"{len(launches)} launches of {kernel}; one is supported")
    args = split_top(launches[0])
    dims = [re.fullmatch(r"dim3\((.*)\)", a.strip(), re.S) for a in args[:2]]
    if len(args) < 3 or not all(dims) or not args[2].isdigit():
        fail(f"the launch of {kernel} is not dim3(grid), dim3(block), constant shared memory: "
             f"<<<{launches[0]}>>>")
    grid = split_top(dims[0].group(1))
    block = 1
    for b in split_top(dims[1].group(1)):
        if not b.isdigit():
            fail(f"the launch of {kernel} has a block of run-time size: {dims[1].group(0)}")
        block *= int(b)
    return grid, block, int(args[2])


def c_eval(expr, values):
    """A C integer expression of the sizes (non-negative, so that C's
    division is Python's floor division), or None when it is not one."""
    expr = re.sub(r"\(\s*(?:int32_t|int64_t|int|uint32_t)\s*\)", "", expr)  # casts
    if not re.fullmatch(r"[\w\s()+*/%<>=!?:,-]*", expr) or "?" in expr:
        return None
    py = re.sub(r"(?<![/])/(?!/)", "//", expr)
    try:
        return int(eval(py, {"__builtins__": {}, "min": min, "max": max}, dict(values)))
    except Exception:  # noqa: BLE001 - any failure: not an expression we can check
        return None


def check_launch(meta, grid, block, kernel):
    """Refuses a program whose launch is not the entry's: its threads, and
    its grid at two sets of sizes (the entry's fixed values, 1000 and 4096
    for its other integer parameters). Tilus builds one program per point
    of an autotune space; only the point of the entry's config has its
    grid."""
    head = meta[0].split()
    threads = int(next(f.split("=")[1] for f in head if f.startswith("block=")))
    if threads != block:
        fail(f"{kernel} runs {block} threads a block, the entry {threads}")
    fixed, ints, mgrid = {}, [], None
    for line in meta:
        f = line.split()
        if f[1] == "fixed":
            fixed = {k: int(v) for k, v in (kv.split("=") for kv in f[2:])}
        elif f[1] == "param" and f[3] in ("i32", "u32", "i64", "u64"):
            ints.append(f[2])
        elif f[1] == "grid":
            mgrid = f[2:]
    for size in (1000, 4096):
        values = {n: fixed.get(n, size) for n in ints}
        want = [c_eval(g, values) for g in mgrid]
        got = [c_eval(g, values) for g in grid]
        if None in want or None in got:
            fail(f"cannot compare {kernel}'s grid ({', '.join(grid)}) with the entry's "
                 f"({' '.join(mgrid)})")
        if want != got:
            fail(f"{kernel}'s grid is {got} where the entry's is {want} (sizes {values}): another "
                 "point of the autotune space?")


def entry_metadata(ptx_text, entry):
    """The `//@tls` lines of `entry` (entry line to its last line)."""
    out, inside = [], False
    for line in ptx_text.split("\n"):
        if line.startswith("//@tls entry "):
            inside = line.split()[2] == entry
        elif line.startswith("//@tls end"):
            inside = False
        if inside:
            out.append(line)
    if not out:
        fail(f"no entry '{entry}' in the --like file")
    return out


def wrap(ptx, meta, entry, kernel, smem, program):
    """Tilus's PTX under the entry's metadata, renamed and with the
    entry's parameters."""
    name = "tilus_" + entry
    fixed = set()
    params = []  # (name, is_workspace)
    for line in meta:
        f = line.split()
        if f[1] == "fixed":
            fixed = {kv.split("=")[0] for kv in f[2:]}
        elif f[1] == "param":
            params.append((f[2], f[-1] == "workspace"))
        elif f[1] == "tmap":
            fail("the entry has tensor maps; Tilus's kernel takes them as parameters this tool "
                 "does not map")
    head = ["//@tls version 1",
            f"//@tls source Tilus's CUDA for {entry}, compiled by nvcc -ptx (scripts/tilus_ptx.py)"]
    for line in meta:
        f = line.split()
        if f[1] == "entry":
            line = re.sub(r"^//@tls entry \S+", f"//@tls entry {name}", line)
            line = re.sub(r"smem=\d+", f"smem={smem}", line)
        elif f[1] == "config":  # the program's own point, not the entry's
            line = f"//@tls config origin=tilus program={program}"
        elif f[1] == "occupancy":  # Tilus's code is the entry's own here
            continue
        head.append(line)
    head.append("//@tls end")
    m = re.search(rf"\.visible \.entry {kernel}\(\n(.*?)\n\)", ptx, re.S)
    if not m:
        fail(f"no entry {kernel} in nvcc's PTX")
    tparams = [re.match(r"\s*(\.param \.\w+(?: \.align \d+)?(?: \.\w+)*) (\w+)(\[\d+\])?,?$", p)
               for p in m.group(1).split("\n")]
    if not all(tparams) or any(p.group(3) for p in tparams):
        fail("a parameter of Tilus's kernel is not a scalar or a pointer (a tensor map?)")
    runtime = [p for p in params if p[0] not in fixed]
    if len(runtime) != len(tparams):
        fail(f"Tilus's kernel takes {len(tparams)} parameters; the entry has {len(runtime)} "
             f"besides the fixed {sorted(fixed)}: {[p[0] for p in runtime]}")
    decl, it = [], iter(tparams)
    renames = {}
    for pname, _ in params:
        if pname in fixed:
            decl.append(f"\t.param .u32 {name}_param_{pname}")
        else:
            t = next(it)
            renames[t.group(2)] = f"{name}_param_{pname}"
            decl.append(f"\t{t.group(1)} {name}_param_{pname}")
    body = ptx[:m.start()] + f".visible .entry {name}(\n" + ",\n".join(decl) + "\n)" + ptx[m.end():]
    for old, new in renames.items():
        body = re.sub(rf"\b{old}\b", new, body)
    return "\n".join(head) + "\n" + body


def point_of(config_line):
    """'//@tls config a=1 b=(16,16)' -> {'a': '1', 'b': '(16,16)'}"""
    return dict(kv.split("=", 1) for kv in config_line.split()[2:])


def entry_at(ptx_text, entry, at):
    """ENTRY's sibling at the autotune point `at` ('k=v,...'): the entry
    whose config holds those values (of the names it has) and whose name
    is ENTRY's with the point's segment (its config values joined by '_')
    replaced."""
    want = {k.strip(): v.replace(" ", "") for k, v in
            (kv.split("=", 1) for kv in split_top(at) if kv)}
    entries, name = {}, None
    for line in ptx_text.split("\n"):
        if line.startswith("//@tls entry "):
            name = line.split()[2]
        elif line.startswith("//@tls config ") and name:
            point = point_of(line)
            values = list(point.values())
            # the longest run of the config's values that names the entry
            # (tlsc's own config keys, as registers=occupancy, come last
            # and are spelled otherwise in the name)
            segs = ["__" + "_".join(values[:j]) for j in range(len(values), 0, -1)]
            seg = next((s for s in segs if s + "__" in name + "__"), None)
            entries[name] = (point, name.replace(seg, "__@", 1) if seg else name)
    if entry not in entries:
        fail(f"no entry '{entry}' in the --like file")
    shape = entries[entry][1]
    for name, (point, named) in entries.items():
        # keys the entry's config lacks (Tilus's report also lists the
        # script's fixed arguments) do not decide
        if named == shape and all(point[k].replace(" ", "") == v
                                  for k, v in want.items() if k in point):
            return name
    fail(f"no entry like {entry} at {at}")


def table_rows(path):
    """The rows of a table tabulate wrote (header, dashes, rows) as
    {header: cell}; the dashes give the columns, since cells hold spaces."""
    lines = open(path).read().rstrip("\n").split("\n")
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    cut = lambda line: [line[a:b + 1].strip() if i + 1 < len(spans) else line[a:].strip()
                        for i, (a, b) in enumerate(spans)]
    heads = cut(lines[0])
    return [dict(zip(heads, cut(line))) for line in lines[2:] if line.strip()]


def programs(cache):
    """The programs of a Tilus cache: (hash, index, latency, chosen, point)
    for each script instance's tuned programs (scripts/NAME/KEY/: programs/I
    links to the program's folder, latency/KEY/report.txt lists index,
    point and latency, dispatch_table.json the index chosen)."""
    out = []
    for inst in sorted(glob.glob(os.path.join(cache, "scripts", "*", "*"))):
        chosen = set()
        table = os.path.join(inst, "dispatch_table.json")
        if os.path.exists(table):
            chosen = {value for _, value in json.load(open(table))["entries"]}
        latency = {}
        for report in glob.glob(os.path.join(inst, "latency", "*", "report.txt")):
            for row in table_rows(report):
                index = int(row.pop("index"))
                lat = row.pop("latency (ms)")
                latency[index] = (lat, ",".join(f"{k}={v.replace(' ', '')}" for k, v in row.items()))
        for link in sorted(glob.glob(os.path.join(inst, "programs", "*")),
                           key=lambda p: int(os.path.basename(p))):
            index = int(os.path.basename(link))
            lat, point = latency.get(index, ("-", "-"))
            out.append((os.path.basename(os.path.realpath(link)), index, lat,
                        index in chosen, point))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", metavar="CACHE", help="list the programs of a Tilus cache")
    ap.add_argument("--cu", help="Tilus's generated CUDA source of one program")
    ap.add_argument("--like", help="tlsc's PTX of the same script")
    ap.add_argument("--entry", help="the tlsc entry whose metadata to take")
    ap.add_argument("--at", metavar="NAME=VALUE,...", help="take ENTRY's sibling at this point")
    ap.add_argument("-o", "--out")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--keep-cu", metavar="DIR", help="also write the device-only CUDA there")
    opts = ap.parse_args()
    if opts.programs:
        for row in programs(opts.programs):
            print(f"{row[0]} {row[1]} {row[2]} {'chosen' if row[3] else '-'} {row[4]}")
        return
    if not (opts.cu and opts.like and opts.entry and opts.out):
        ap.error("--cu, --like, --entry and -o are required (or --programs CACHE)")
    text = open(opts.cu).read()
    src, kernel = device_source(text)
    grid, block, smem = program_launch(text, kernel)
    like = open(opts.like).read()
    if opts.at:
        opts.entry = entry_at(like, opts.entry, opts.at)
    meta = entry_metadata(like, opts.entry)
    check_launch(meta, grid, block, kernel)
    with tempfile.TemporaryDirectory() as tmp:
        cu = os.path.join(opts.keep_cu or tmp, "tilus_device.cu")
        if opts.keep_cu:
            os.makedirs(opts.keep_cu, exist_ok=True)
        with open(cu, "w") as f:
            f.write(src)
        ptx = os.path.join(tmp, "tilus.ptx")
        run = subprocess.run([opts.nvcc, "-arch=sm_90a", "-ptx", "-O3", "-std=c++17",
                              "-diag-suppress", "177", cu, "-o", ptx], capture_output=True, text=True)
        if run.returncode:
            fail(f"nvcc failed:\n{run.stderr[-3000:]}")
        program = os.path.splitext(os.path.basename(opts.cu))[0]
        out = wrap(open(ptx).read(), meta, opts.entry, kernel, smem, program)
    with open(opts.out, "w") as f:
        f.write(out)
    print(f"{opts.out}: tilus_{opts.entry} ({kernel}, {smem} bytes of dynamic shared memory)")


if __name__ == "__main__":
    main()
