#!/bin/sh
# tilus_table_check.sh SCRIPTS_DIR: the kernels_check.py command line
# scripts/tilus_table.py builds for a case, as a table row times it and as
# --check-only checks it (every entry at the ragged sizes, no Tilus, no
# timing: the GPU suite's TILUS_CHECK_ALL step), and the verdict it reads
# from kernels_check's output (golden).
python3 - "$1" <<'PY'
import os
import sys
import types
sys.path.insert(0, sys.argv[1])
import tilus_table as t
for check_only in (False, True):
    opts = types.SimpleNamespace(build="BUILD", rounds=10, check_only=check_only)
    for name in ("ampere_v5", "flash_attention_v2", "matmul_a16wx_int8"):
        cmd = t.check_command(t.CASES[name], "SRC.py", "X.ptx", [], opts)
        cmd = [os.path.basename(c) if c.endswith(".py") else c for c in cmd[1:]]
        print("check-only" if check_only else "table", name + ":", " ".join(cmd))
for out in ["check matmul_kn 1000x1016x1032: 372 entries, worst rel_err 6.10e-04 MatmulV5 ok\n",
            "check attention 2x200: 12 entries, worst rel_err inf FlashAttention__2_32_32 FAIL\n"
            "check attention 1x1024: 12 entries, worst rel_err 2.5e-04 FlashAttention ok\n",
            "kernels_check: no CUDA device\n"]:
    print(t.check_verdict(out))
PY
