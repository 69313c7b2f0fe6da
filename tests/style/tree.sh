#!/usr/bin/env bash
# tree.sh ROOT: the tree stands alone and stays balanced.
#  - no file refers to a document outside the repository;
#  - file names of C sources are unique across the tree;
#  - no folder holds more than a quarter of the tree's C lines.
set -u
root=$1
cd "$root" || exit 2
bad=0
# The tracked files where this is a git checkout; else every file outside
# build folders (any folder holding a CMakeCache.txt).
files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard | while IFS= read -r f; do
      [ -f "$f" ] && echo "./$f"
    done | if [ $# -gt 0 ]; then grep -E "$1"; else cat; fi
  else
    find . \( -name .git -o -exec test -e '{}/CMakeCache.txt' \; \) -prune -o -type f -print |
      if [ $# -gt 0 ]; then grep -E "$1"; else cat; fi
  fi
}

# A design brief, a shared folder or a seed outside the repository.
outside='DESIGN''\.md|\.\./shared|shared/(seeds|bench|tilus)'
if hits=$(files | xargs grep -lE "$outside" 2>/dev/null) && [ -n "$hits" ]; then
  for h in $hits; do grep -nE "$outside" "$h" | sed "s|^|tree: $h:|"; done
  echo "tree: these files refer to documents outside the repository"
  bad=1
fi

dups=$(files '\.(c|h|l|y)$' |
  sed 's|.*/||' | sort | uniq -d)
if [ -n "$dups" ]; then
  echo "tree: C file names used twice: $dups"
  bad=1
fi

# The measure of issue 12: every C line of the tree (tests included), and
# the top-level folder holding the most of them.
sizes=$(files '\.(c|h|l|y)$' | while IFS= read -r f; do
  dir=${f#./}
  dir=${dir%%/*}
  echo "$dir $(wc -l <"$f")"
done | awk '{n[$1] += $2; t += $2} END {for (d in n) print n[d], d, t}' | sort -rn | head -1)
read -r largest name total <<<"$sizes"
echo "tree: largest folder $name, $largest of $total C lines"
if [ $((largest * 4)) -gt "$total" ]; then
  echo "tree: $name holds more than a quarter of the C lines"
  bad=1
fi
exit $bad
