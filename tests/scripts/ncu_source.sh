#!/bin/sh
# ncu_source.sh SCRIPTS_DIR: scripts/ncu_source.py on ncu_source.csv, rows
# of ncu's source page (--page source --csv --print-source sass) for two
# tlsc builds of matmul_a16wx.py's int8 kernel on the H200: each kernel's
# summary, the two side by side, and the refusal of a kernel not in the
# file (golden).
here=$(dirname "$0")
python3 "$1/ncu_source.py" "$here/ncu_source.csv" --top 4
python3 "$1/ncu_source.py" "$here/ncu_source.csv" --diff 0 1 --top 4
python3 "$1/ncu_source.py" "$here/ncu_source.csv" --diff 0 2 2>&1
echo "exit $?"
