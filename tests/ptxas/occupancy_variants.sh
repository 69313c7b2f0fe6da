#!/usr/bin/env bash
# occupancy_variants.sh TLSC: which entries get a second entry without
# .minnctapersm (backend_ptx/emit.c, occupancy_variant): a kernel that
# multiplies with mma.sync (kernels/copy_inside.tls, its first autotune
# point) does, with config registers=occupancy and the same code; one with
# setmaxnreg (examples/matmul_v7.tls) and one without a dot
# (examples/softmax.tls, its first points) do not. Per entry: its name, whether
# it has the hint, its config line.
set -eu
tlsc=$1 out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$tlsc" tests/ptxas/kernels/copy_inside.tls -D block_k=32 -o "$out/a.ptx"
"$tlsc" examples/matmul_v7.tls -o "$out/b.ptx"
"$tlsc" examples/softmax.tls -o "$out/c.ptx"
for f in a b c; do
  awk '/^\/\/@tls config/ { sub(/^\/\/@tls config ?/, ""); cfg[++nc] = $0 }
       /^\.visible \.entry/ { name = $3; sub(/\($/, "", name); order[++n] = name }
       /^\.minnctapersm/ { hint[name] = 1 }
       END { for (i = 1; i <= n; i++)
               printf "%s: %s; config %s\n", order[i], hint[order[i]] ? ".minnctapersm 1" : "no hint", cfg[i] == "" ? "(none)" : cfg[i] }' "$out/$f.ptx" | head -4
done
# the variant's code is its entry's, but for the name and the hint
awk '/^\.visible \.entry/ { name = $3; sub(/\($/, "", name) }
     name != "" && !/^\.visible \.entry/ && !/^\.minnctapersm/ { line = $0; gsub(name, "ENTRY", line); body[name] = body[name] line "\n" }
     END { a = body["CopyInside__32"]; b = body["CopyInside__32__occupancy"];
           print (a != "" && a == b) ? "same code" : "different code" }' "$out/a.ptx"
