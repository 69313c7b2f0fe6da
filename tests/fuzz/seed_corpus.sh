#!/usr/bin/env sh
# seed_corpus.sh: SRC_ROOT DEST: copies every .tls of examples/ and tests/
# (recursively) into DEST, one flat folder, as the fuzzers' seed corpus.
# Files are named by their path so that two scripts of one name both stay.
set -eu
root=$1 dest=$2
mkdir -p "$dest"
cd "$root"
find examples tests -name '*.tls' -type f | while read -r f; do
  cp "$f" "$dest/$(printf '%s' "$f" | tr '/' '_')"
done
