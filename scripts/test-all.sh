#!/usr/bin/env bash
# test-all.sh: the whole test suite, twice: a normal build, then a build with
# AddressSanitizer + UndefinedBehaviorSanitizer. GPU tests skip themselves
# where no GPU is found. Then, where clang is found, the fuzzers for a short
# fixed time (build-fuzz).
#
# TILUS_EXAMPLES=DIR (a Tilus checkout's examples folder) adds the Tilus
# conformance suite (tests/tilus): every example file through tlsc, and
# where ptxas is found through ptxas too, every entry with no spill and no
# warning (minutes: Ampere v5 has 192 entries).
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
for cfg in build:OFF build-asan:ON; do
  dir=${cfg%%:*} san=${cfg##*:}
  echo "=== $dir (sanitizers $san)"
  cmake -S . -B "$dir" -DTLSC_SANITIZE="$san" \
    -DTLSC_TILUS_EXAMPLES="${TILUS_EXAMPLES:-}" >/dev/null
  cmake --build "$dir" -j"$jobs"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs"
done
# Third: the fuzzers (libFuzzer, so clang only), ASan + UBSan, each for a
# fixed short time on the seed corpus, plus the fuzz regressions. Only the
# fuzz targets are built: the rest of the suite ran above.
fuzz_ok() { # clang with libFuzzer's runtime (libclang-rt) links a fuzzer
  local d; d=$(mktemp -d)
  printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$d/f.c"
  clang -fsanitize=fuzzer,address "$d/f.c" -o "$d/f" >/dev/null 2>&1; local rc=$?
  rm -rf "$d"; return $rc
}
if command -v clang >/dev/null 2>&1 && fuzz_ok; then
  echo "=== build-fuzz (clang, libFuzzer, sanitizers ON)"
  CC=clang cmake -S . -B build-fuzz -DTLSC_FUZZ=ON -DTLSC_SANITIZE=ON >/dev/null
  cmake --build build-fuzz -j"$jobs" --target tlsc tls_fuzz_parse \
    tls_fuzz_compile tls_fuzz_meta
  ctest --test-dir build-fuzz --output-on-failure -j"$jobs" -R '^fuzz'
else
  echo "=== build-fuzz skipped: no clang with libFuzzer here"
fi
