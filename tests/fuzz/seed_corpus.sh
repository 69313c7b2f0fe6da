#!/usr/bin/env sh
# seed_corpus.sh SRC_ROOT DEST [EXTRA_DIR...]: copies every .tls of
# examples/ and tests/ (recursively) into DEST, one flat folder, as the
# fuzzers' seed corpus, and every .tls and .py of each EXTRA_DIR (say, a
# folder of Tilus example kernels: -DTLSC_FUZZ_EXTRA_SEEDS=DIR). Files are
# named by their path so that two scripts of one name both stay.
set -eu
root=$1 dest=$2
shift 2
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
copy_from() { # DIR PREFIX FIND-ARGS...
  (cd "$1" && shift 2 && find . "$@" -type f) | while read -r f; do
    cp "$1/$f" "$dest/$2$(printf '%s' "${f#./}" | tr '/' '_')"
  done
}
copy_from "$root" "" \( -path ./examples/\* -o -path ./tests/\* \) -name '*.tls'
n=0
for extra in "$@"; do
  n=$((n + 1))
  copy_from "$extra" "extra${n}_" \( -name '*.tls' -o -name '*.py' \)
done
