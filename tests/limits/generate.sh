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
# Issue 13: the parser's time and memory are linear. Each construct sits in
# a function that is never called (or ends in a syntax error), so the run
# ends with one error about the last line; the test runs tlsc under
# ulimit -v and a time limit. Before: 200000 comparison links or adjacent
# strings took O(n^2) memory (5.7 GB for 100000), 200000 keyword arguments
# or parameters O(n^2) time (4-6 s for 30000), dotted names O(n^2) both.
awk 'BEGIN { printf "def g():\n    return 1"; for (i = 0; i < 200000; i++) printf " < 1"
             print "\ny = undefined_name" }' > compare_chain.tls
awk 'BEGIN { printf "def g():\n    return \"a\""; for (i = 0; i < 200000; i++) printf " \"a\""
             print "\ny = undefined_name" }' > string_pieces.tls
awk 'BEGIN { printf "def g():\n    f("; for (i = 0; i < 200000; i++) printf "k%d=1, ", i
             print ")\ny = undefined_name" }' > keyword_args.tls
awk 'BEGIN { printf "def g("; for (i = 0; i < 200000; i++) printf "p%d, ", i
             print "):\n    pass\ny = undefined_name" }' > many_params.tls
awk 'BEGIN { printf "def g():\n    from a"; for (i = 0; i < 200000; i++) printf ".a"
             print " import b\ny = undefined_name" }' > dotted_name.tls
# Two million simple statements, then a syntax error: the whole tree is
# built first, in under 400 bytes a statement (529 before).
awk 'BEGIN { for (i = 0; i < 2000000; i++) print "x = 1"; print "x = = 1" }' > statements.tls
# An if with 4999 elifs on a run-time condition, and with 99999 on a
# compile-time one, compile (once refused as "too deeply nested": an elif
# counted as nesting); 6000 elifs on a run-time condition nest 6001 S_IFs,
# past the run-time nesting limit.
elif_chain() { # ELIFS CONDITION
  awk -v n="$1" -v c="$2" 'BEGIN {
    print "import tilus\nfrom tilus import float32, int32\n\n"
    print "class K(tilus.Script):"
    print "    def __call__(self, n: int32, out_ptr: ~float32):"
    print "        self.attrs.blocks = 1"
    print "        self.attrs.warps = 1"
    print "        g = self.global_view(out_ptr, dtype=float32, shape=[1, 32])"
    print "        t: int32 = 0"
    print "        if " c " == 0:\n            t = 0"
    for (i = 1; i <= n; i++) printf "        elif %s == %d:\n            t = %d\n", c, i, i
    print "        else:\n            t = -1"
    print "        v = self.register_tensor(dtype=float32, shape=[1, 32], init=0.0)"
    print "        self.store_global(g, v, offsets=[t, 0])" }'
}
elif_chain 4999 n > elif_chain_runtime.tls
elif_chain 99999 7 > elif_chain_compile_time.tls
elif_chain 6000 n > elif_chain_too_deep.tls
# Issue 14: host code's constructs are linear too, and nest no deeper than
# the limits. 200000 nested lambdas end on the parser's stack; f-strings
# nested in each other's fields (Python 3.12 lets them reuse the quote) at
# the bracket limit; 200000 adjacent f-strings, dict items, **arguments,
# except clauses, lambda parameters and imported modules are linear.
awk 'BEGIN { printf "def g():\n    return "; for (i = 0; i < 200000; i++) printf "lambda: "
             print "0\ny = undefined_name" }' > lambda_chain.tls
awk 'BEGIN { printf "x = "; for (i = 0; i < 100000; i++) printf "f\"{"
             printf "1"; for (i = 0; i < 100000; i++) printf "}\""; print "" }' > fstring_nested.tls
awk 'BEGIN { printf "def g():\n    return f\"a\""; for (i = 0; i < 200000; i++) printf " f\"{x}b\""
             print "\ny = undefined_name" }' > fstring_pieces.tls
awk 'BEGIN { printf "def g():\n    return {"; for (i = 0; i < 200000; i++) printf "%d: [x], **y, ", i
             print "}\ny = undefined_name" }' > dict_items.tls
awk 'BEGIN { printf "def g():\n    f(*a"; for (i = 0; i < 200000; i++) printf ", **k%d", i
             print ")\ny = undefined_name" }' > dstar_args.tls
awk 'BEGIN { print "def g():\n    try:\n        pass"; for (i = 0; i < 100000; i++)
             print "    except E" i " as e:\n        pass"
             print "y = undefined_name" }' > except_clauses.tls
awk 'BEGIN { printf "def g():\n    return lambda "; for (i = 0; i < 200000; i++) printf "p%d, ", i
             print "*, k: 0\ny = undefined_name" }' > lambda_params.tls
awk 'BEGIN { printf "def g():\n    import m0"; for (i = 1; i < 200000; i++) printf ", m%d", i
             print "\ny = undefined_name" }' > import_names.tls
