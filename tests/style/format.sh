#!/usr/bin/env bash
# format.sh ROOT: every .c and .h of the tree follows .clang-format.
# Exit 77 (skipped) where clang-format is not installed.
set -u
root=$1
cd "$root" || exit 2
command -v clang-format >/dev/null || { echo "format: no clang-format, skipped"; exit 77; }
srcs=$(find base frontend ir eval sim backend_ptx runtime tools driver tests \
  \( -name '*.c' -o -name '*.h' \) -type f | sort)
if ! clang-format --dry-run --Werror $srcs; then
  echo "format: run clang-format -i on the files above"
  exit 1
fi
echo "format: $(echo "$srcs" | wc -l) files follow .clang-format"
