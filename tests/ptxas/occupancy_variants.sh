#!/usr/bin/env bash
# occupancy_variants.sh TLSC: which entries get a register-allocation
# variant (backend_ptx/emit.c, occupancy_variant): a kernel that multiplies
# with mma.sync (kernels/copy_inside.tls, its first autotune point) does,
# NAME__occupancy with config registers=occupancy, an `occupancy NAME`
# line and no code of its own (libtlsrt builds it from NAME's:
# runtime/occupancy.c); one with setmaxnreg (examples/matmul_v7.tls) and
# one without a dot (examples/softmax.tls, its first points) do not. Per
# entry of the metadata: its name, its code (the entry's hint, or what it
# takes), its config line.
set -eu
tlsc=$1 out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$tlsc" tests/ptxas/kernels/copy_inside.tls -D block_k=32 -o "$out/a.ptx"
"$tlsc" examples/matmul_v7.tls -o "$out/b.ptx"
"$tlsc" examples/softmax.tls -o "$out/c.ptx"
for f in a b c; do
  awk '/^\/\/@tls entry / { order[++n] = $3 }
       /^\/\/@tls config/ { sub(/^\/\/@tls config ?/, ""); cfg[order[n]] = $0 }
       /^\/\/@tls occupancy / { of[order[n]] = $3 }
       /^\.visible \.entry/ { name = $3; sub(/\($/, "", name); code[name] = "no hint" }
       /^\.minnctapersm/ { code[name] = $0 }
       END { for (i = 1; i <= n; i++) {
               e = order[i]
               what = e in of ? "no code, occupancy " of[e] : e in code ? code[e] : "NO CODE"
               printf "%s: %s; config %s\n", e, what, cfg[e] == "" ? "(none)" : cfg[e] } }' \
    "$out/$f.ptx" | head -4
done
