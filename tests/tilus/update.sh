#!/usr/bin/env bash
# update.sh TLSC EXAMPLES: rewrites expected/*.out with what TLSC gives now
# on every .py of EXAMPLES. Read the diff before committing it: a line that
# moves away from `ok` is a regression.
set -eu
tlsc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
examples=$2
here=$(cd "$(dirname "$0")" && pwd)
cd "$examples"
find . -name '*.py' -type f | sed 's|^\./||' | sort | while read -r rel; do
  name=$(printf '%s' "${rel%.py}" | sed 's|/|__|g')
  args=()
  [ -f "$here/expected/$name.args" ] && read -r -a args <"$here/expected/$name.args"
  if "$tlsc" "${args[@]}" "$rel" -o /dev/null 2>/tmp/conform.$$; then echo ok; else head -1 /tmp/conform.$$; fi \
    >"$here/expected/$name.out"
done
rm -f /tmp/conform.$$
