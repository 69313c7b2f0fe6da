#!/usr/bin/env bash
# row_plan.sh FILE.ptx: kernels/dot_rows.tls's operand loads planned by
# rows (emit_spread.c, row_planned): per entry, up to its first store, its
# 64-bit multiply-adds (a load's origin, then one per further row of a
# thread's operand elements: A's 8 rows and B's 4, in each copy of the
# loop, where each load made its own before) and its global loads at a
# non-zero immediate offset from a row's address; then what
# ptxas -v says of its spill: 40 bytes with an address per load, none now.
set -eu
awk '/^\.visible \.entry/ { name = $3; sub(/\($/, "", name); order[++n] = name; stored = 0 }
     /st\.global/ { stored = 1 }
     !stored && /mad\.lo\.s64/ { mads[name]++ }
     !stored && /ld\.global.*\[%rd[0-9]+\+[1-9][0-9]*\]/ { imm[name]++ }
     END { for (i = 1; i <= n; i++) printf "%s: %d mad.lo.s64, %d loads at immediates\n", order[i], mads[order[i]], imm[order[i]] }' "$1"
"${PTXAS:-ptxas}" -arch=sm_90a -v "$1" -o /dev/null 2>&1 |
  awk '/Compiling entry/ { n = $7; gsub("\047", "", n) }
       /spill stores/ { print n ": " ($5 == 0 ? "no spill" : "spills") }'
