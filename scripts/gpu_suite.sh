#!/usr/bin/env bash
# gpu_suite.sh [BUILD_DIR]: the GPU test suite, run from the repo root on a
# machine with a GPU, using a build folder configured and built elsewhere
# (default build-rt; the GPU machine has no flex/bison, so carry it).
#   1. compiles every example with the carried tlsc
#   2. runs the libtlsrt fixture test, then ctest's gpu_* and ptx_gpu_*
#      tests (libtlsrt fixtures, tlsrun vector adds, matmul_v5 against
#      cuBLAS, the PTX test kernels with guard regions)
#   3. tlsrun --check on matmul_v5 at 4096^3, 8192^3, 1000x1016x1032 and
#      128x256x64 with another seed
#   4. compute-sanitizer memcheck, racecheck and synccheck on a small matmul
#   5. the bf16 and fp8 examples against torch (scripts/kernels_check.py),
#      and, with TILUS_EXAMPLES=DIR (Tilus's examples folder, carried),
#      every entry of its decode and quantization kernels against torch
#      (scripts/decode_check.py, kernels_check.py); skipped without torch
#   6. with TILUS_CHECK_ALL=1 too, every entry of every Tilus example file
#      scripts/tilus_table.py lists, at its ragged sizes
#      (tilus_table.py --check-only; several minutes: run it in a device
#      call of its own). flash_attention_v2's 2-warp entries and Ampere
#      v5's 4_32_256 ones were wrong for a session and no step saw it.
# Logs go to $OUT (default out/gpu): suite.log, sanitizer.log, ctest.log and
# the compiled PTX. Exit status: the number of failed steps (0 = all passed).
set -u
build=${1:-build-rt}
out=${OUT:-out/gpu}
mkdir -p "$out"
log=$out/suite.log
: >"$log"
fails=0
say() { echo "$*" | tee -a "$log"; }
step() { # step NAME COMMAND...: runs it, logs it, counts a failure
  local name=$1; shift
  say "== $name: $*"
  "$@" >>"$log" 2>&1
  local rc=$?
  if [ "$rc" = 0 ]; then say "-- $name: ok"; else say "-- $name: FAILED (exit $rc)"; fails=$((fails + 1)); fi
}

# The build folder holds absolute paths to the tree it was configured from;
# point that path at this checkout when it is elsewhere.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
if [ -n "$src" ] && [ ! -e "$src" ]; then
  mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src" && say "linked $src -> $PWD"
fi
tlsc=$build/driver/tlsc tlsrun=$build/tools/tlsrun/tlsrun

say "== $(date -u) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >>"$log" 2>&1
"$tlsrun" --probe >>"$log" 2>&1 || { say "no GPU: tlsrun --probe failed"; exit 3; }

for tls in examples/*.tls; do
  name=$(basename "$tls" .tls)
  step "tlsc $name" "$tlsc" "$tls" -o "$out/$name.ptx"
done

# libtlsrt alone on nvcc-built fixtures (prints the host cost of a launch).
step "libtlsrt fixtures" "$build/tests/gpu/test_gpu_runtime" tests/gpu/fixtures/fixtures.ptx

say "== ctest gpu_*"
# (CTEST_PARALLEL=N runs N at a time: the tests check results, they time
# nothing, so they may share the GPU)
ctest --test-dir "$build" -R "^gpu_|^ptx_gpu|^python_gpu" --timeout "${CTEST_TIMEOUT:-120}" \
  -j "${CTEST_PARALLEL:-1}" --output-on-failure >"$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|Passed|Failed|Skipped|\*\*\*" "$out/ctest.log" | tee -a "$log"
[ "$rc" = 0 ] || { say "-- ctest: FAILED"; fails=$((fails + 1)); }

if [ -f "$out/matmul_v5.ptx" ]; then
  for size in 4096x4096x4096 8192x8192x8192 1000x1016x1032 128x256x64; do
    step "check $size" timeout 120 "$tlsrun" "$out/matmul_v5.ptx" --kernel MatmulWGMMAV5 --sizes "$size" --check --seed 7
  done
  san=$out/sanitizer.log
  : >"$san"
  for tool in memcheck racecheck synccheck; do
    say "== compute-sanitizer --tool $tool (128x256x128, host reference)"
    TLSC_NO_CUBLAS=1 timeout "${SAN_TIMEOUT:-120}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$tlsrun" "$out/matmul_v5.ptx" --kernel MatmulWGMMAV5 --sizes 128x256x128 --check >>"$san" 2>&1
    rc=$?
    tail -3 "$san" | tee -a "$log"
    if [ "$rc" = 0 ]; then say "-- $tool: ok"; else say "-- $tool: FAILED (exit $rc)"; fails=$((fails + 1)); fi
  done
else
  say "-- no matmul_v5.ptx: skipped the checks and the sanitizers"
  fails=$((fails + 1))
fi

# Correctness against torch of the kernels tlsrun does not know (exit 3:
# no torch or no GPU, a skip).
pycheck() { # pycheck NAME SCRIPT ARGS...
  local name=$1; shift
  say "== $name"
  python3 "$@" >>"$log" 2>&1
  local rc=$?
  case $rc in
  0) say "-- $name: ok" ;;
  3) say "-- $name: skipped (no torch or no GPU)" ;;
  *) say "-- $name: FAILED (exit $rc)"; fails=$((fails + 1)) ;;
  esac
}
lib=$build/runtime/libtlsrt.so
pycheck "bf16 and fp8 matmuls against torch" scripts/kernels_check.py --lib "$lib" \
  --case "matmul_bf16:$out/matmul_bf16.ptx:MatmulBF16" --case "matmul_fp8:$out/matmul_fp8.ptx:MatmulFP8"
if [ -n "${TILUS_EXAMPLES:-}" ]; then
  tx=$TILUS_EXAMPLES
  step "tlsc decode" "$tlsc" "$tx/flash_attention_decode/tilus_kernel.py" -D K=128 -D V=128 -o "$out/decode.ptx"
  step "tlsc per_token_cast" "$tlsc" "$tx/quantization/per_token_cast.py" -o "$out/ptc.ptx"
  step "tlsc swiglu" "$tlsc" "$tx/quantization/swiglu_forward_and_per_token_cast.py" -o "$out/swiglu.ptx"
  step "tlsc a16wx" "$tlsc" "$tx/quantization/matmul_a16wx.py" -D "weight_tile=(16,16)" -D a_dtype=float16 \
    -D b_dtype=int4b -D group_size=128 -D num_stages=3 -o "$out/a16wx.ptx"
  pycheck "decode kernels against torch" scripts/decode_check.py --lib "$lib" --ptx "$out/decode.ptx" \
    --example "$tx/flash_attention_decode"
  pycheck "quantization kernels against torch" scripts/kernels_check.py --lib "$lib" \
    --case "per_token_cast:$out/ptc.ptx:PerTokenCast" \
    --case "swiglu_cast:$out/swiglu.ptx:SwiGLUForwardAndPerTokenCast" \
    --case "a16wx:$out/a16wx.ptx:QuantizedMatmul"
  if [ "${TILUS_CHECK_ALL:-0}" = 1 ]; then
    pycheck "every entry of Tilus's example files against torch" scripts/tilus_table.py \
      --check-only --tilus "$(dirname "$tx")" --build "$build" --logs "$out/tilus_checks" --timeout 400
  fi
fi

say "== done: $fails failed step(s)"
exit "$fails"
