#!/usr/bin/env bash
# test-all.sh: the whole test suite, twice: a normal build, then a build with
# AddressSanitizer + UndefinedBehaviorSanitizer. GPU tests skip themselves
# where no GPU is found.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
for cfg in build:OFF build-asan:ON; do
  dir=${cfg%%:*} san=${cfg##*:}
  echo "=== $dir (sanitizers $san)"
  cmake -S . -B "$dir" -DTLSC_SANITIZE="$san" >/dev/null
  cmake --build "$dir" -j"$jobs"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs"
done
