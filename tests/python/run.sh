#!/usr/bin/env bash
# run.sh SCRIPT.py [ARGS...]: runs a test of the Python package (python/)
# with python3 found on PATH when the test runs; exit 77 (ctest: skipped)
# when there is no python3, and when the script exits 3 (no GPU or torch,
# as tests/gpu/run_or_skip.sh does for tlsrun).
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH="$here/../../python${PYTHONPATH:+:$PYTHONPATH}"
python3 "$@"
rc=$?
[ "$rc" = 3 ] && exit 77
exit "$rc"
