#!/bin/sh
# generate.sh DIR: writes the diagnostics cases too big to keep in git into
# DIR: 10000 nested blocks, 1 MB lines, 100000 unary minuses, a 5000-term
# sum. Each must fail with one clear error, quickly, without a crash.
set -eu
mkdir -p "$1"
cd "$1"
# Line i (from 0) is `if x:` indented by i spaces, 10000 levels deep.
awk 'BEGIN { for (i = 0; i < 10000; i++) { printf "%*sif x:\n", i, "" }
             printf "%*spass\n", 10000, "" }' > deep_blocks.tls
awk 'BEGIN { s = "x"; while (length(s) < 1048576) s = s s
             print s " = 1" }' > long_identifier_1mb.tls
awk 'BEGIN { s = "a"; while (length(s) < 1048576) s = s s
             print "x = \"" s "\"" }' > long_string_1mb.tls
awk 'BEGIN { s = "-"; while (length(s) < 100000) s = s s
             print "x = " s "1" }' > deep_unary.tls
awk 'BEGIN { printf "x = a"; for (i = 1; i < 5000; i++) printf " + a"
             printf "\n" }' > long_sum.tls
