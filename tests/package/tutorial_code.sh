#!/usr/bin/env bash
# tutorial_code.sh REPO_ROOT: every code block of docs/tutorial.md that a
# `<!-- file: PATH -->` line introduces must equal the file PATH, so the
# tutorial's C example is the consumer project that tests/package builds.
# Fails when a marked file differs, is missing, or no block is marked.
set -eu
root=$1
doc=$root/docs/tutorial.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Writes block N to $tmp/N and its path to $tmp/N.path.
awk -v dir="$tmp" '
  /^<!-- file: .* -->$/ { path = $3; want = 1; next }
  want && /^```/ { n++; print path > (dir "/" n ".path"); inblock = 1; want = 0; next }
  inblock && /^```$/ { inblock = 0; next }
  inblock { print > (dir "/" n) }
' "$doc"

count=0
for p in "$tmp"/*.path; do
  [ -e "$p" ] || break
  block=${p%.path}
  path=$(cat "$p")
  count=$((count + 1))
  if ! diff -u "$root/$path" "$block"; then
    echo "tutorial_code: docs/tutorial.md's block for $path differs from the file" >&2
    exit 1
  fi
done
[ "$count" -gt 0 ] || { echo "tutorial_code: no marked code block in $doc" >&2; exit 1; }
echo "tutorial_code: $count code blocks equal their files"
