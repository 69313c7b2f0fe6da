#!/bin/sh
# generate.sh DIR: writes the limits cases too big to keep in git into DIR.
# Each must fail with one clear error within seconds.
set -eu
mkdir -p "$1"
cd "$1"
# A million comment lines, then an error: the position is still exact.
awk 'BEGIN { print "import tilus"; for (i = 0; i < 1000000; i++)
             print "# filler"; print "x = undefined_name" }' > long_file.tls
# 300000 module-level names: scope lookups must not be linear.
awk 'BEGIN { for (i = 0; i < 300000; i++) print "x" i " = " i
             print "y = x299999 + undefined_name" }' > many_names.tls
# 20000 names in the kernel's scope, then a run-time if in a 100000-trip
# compile-time loop: each if copies the scope, and that copying counts
# against the step budget.
awk 'BEGIN { print "import tilus\nfrom tilus import int32\n\n"
             print "class K(tilus.Script):"
             print "    def __call__(self, n: int32):"
             print "        self.attrs.blocks = 1"
             print "        self.attrs.warps = 4"
             for (i = 0; i < 20000; i++) print "        v" i " = " i
             print "        t: int32 = 0"
             print "        for i in range(100000):"
             print "            if n > i:"
             print "                t += 1" }' > big_scope_ifs.tls
