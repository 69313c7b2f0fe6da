#!/usr/bin/env bash
# ptxas_check.sh: build a PTX file, then assemble it for sm_90a and hold it
# to the backend's promises.
#
#   tests/ptxas/ptxas_check.sh PTXAS OUT.ptx [--stack-ok] [ENTRY=SMEM ...] -- COMMAND...
#
# COMMAND must write OUT.ptx. Then `PTXAS -arch=sm_90a -v OUT.ptx` must
# succeed with, for every entry: 0 bytes stack frame, 0 bytes spill stores
# and loads, and no warning at all (in particular no C7510/C7517 or "wgmma
# ... serialized" performance warning, and no "Potential Performance Loss"
# note such as C7508, a setmaxnreg that ptxas ignores). Each ENTRY=SMEM asks
# that the metadata line of ENTRY says smem=SMEM. --stack-ok accepts a stack frame
# (printf's argument buffer) but still no spill. Prints ptxas's register
# summary.
set -u
ptxas=$1 out=$2
shift 2
smem=() stack_ok=0
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  if [ "$1" = --stack-ok ]; then stack_ok=1; else smem+=("$1"); fi
  shift
done
frame='0 bytes stack frame'
[ $stack_ok = 1 ] && frame='[0-9]+ bytes stack frame'
[ $# -gt 0 ] && shift
rm -f "$out"
if ! timeout 120 "$@"; then
  echo "FAIL: the command that writes $out failed: $*"
  exit 1
fi
log=$(timeout "${PTXAS_TIMEOUT:-300}" "$ptxas" -arch=sm_90a -v "$out" -o /dev/null 2>&1)
rc=$?
echo "$log" | grep -E "Compiling entry|Used [0-9]+ registers|stack frame"
fail=0
if [ $rc != 0 ]; then
  echo "FAIL: ptxas exited with $rc"; echo "$log" | head -40; fail=1
fi
if echo "$log" | grep -qiE "warning|C75[0-9][0-9]|Potential Performance Loss|serializ|error"; then
  echo "FAIL: ptxas warned:"
  echo "$log" | grep -iE "warning|C75|Performance Loss|serializ|error" | head -20; fail=1
fi
if echo "$log" | grep -E "stack frame|spill" | grep -qvE "^ *$frame, 0 bytes spill stores, 0 bytes spill loads$"; then
  echo "FAIL: stack frame or spills:"; echo "$log" | grep -E "stack frame|spill"; fail=1
fi
entries=$(echo "$log" | grep -c "Compiling entry")
if [ "$entries" = 0 ] && [ $rc = 0 ]; then
  echo "FAIL: no entry was compiled"; fail=1
fi
for want in "${smem[@]}"; do
  entry=${want%%=*} bytes=${want#*=}
  if ! grep -qE "^//@tls entry $entry .*smem=$bytes\$" "$out"; then
    echo "FAIL: entry $entry should use smem=$bytes; metadata says:"
    grep -E "^//@tls entry" "$out"; fail=1
  fi
done
[ $fail = 0 ] && echo "ok: $out"
exit $fail
