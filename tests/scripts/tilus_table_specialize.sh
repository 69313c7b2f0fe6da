#!/bin/sh
# tilus_table_specialize.sh SCRIPTS_DIR: the --specialize options
# scripts/tilus_table.py passes tlsc for each case kind, and its
# matmul_a16wx case per weight type (golden).
python3 - "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import tilus_table as t
for kind, size in [("matmul", "8192x8192x8192"), ("matmul_kn", "4096x4096x14336"),
                   ("a16wx", "4096x12288x4096"), ("softmax", "8192x8192"),
                   ("attention", "4x4096")]:
    print(kind, size, " ".join(t.specialize_args(kind, size)) or "(none)")
kinds = sorted({spec[1] for spec in t.CASES.values()} & set(t.SPECIALIZED_KINDS))
print("specialised kinds among the cases:", ", ".join(kinds))
for name, spec in t.CASES.items():  # matmul_a16wx: a case per weight type
    if name.startswith("matmul_a16wx"):
        print(name, " ".join(spec[3]), "|", spec[4], "|", " ".join(spec[7]) or "(int4b)")
PY
