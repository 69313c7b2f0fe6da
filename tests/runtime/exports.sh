#!/usr/bin/env bash
# exports.sh TLSRT_H LIBTLSRT_SO: the shared library exports every function
# that tlsrt.h declares (the static inline argument makers aside) and no
# other symbol of its own (runtime/tlsrt.map keeps the internals local).
set -u
header=$1 lib=$2
command -v nm >/dev/null || { echo "exports: no nm: skipped"; exit 77; }
want=$(grep -E '^[a-z].*\btls_[a-z0-9_]+\(' "$header" | grep -v '^static' |
  grep -oE '\btls_[a-z0-9_]+\(' | tr -d '(' | sort -u)
have=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sed 's/@.*//' | sort -u)
missing=$(comm -23 <(echo "$want") <(echo "$have"))
extra=$(comm -13 <(echo "$want") <(echo "$have"))
bad=0
[ -n "$missing" ] && { echo "exports: declared in tlsrt.h but not exported:" $missing; bad=1; }
[ -n "$extra" ] && { echo "exports: exported but not in tlsrt.h:" $extra; bad=1; }
[ "$bad" = 0 ] && echo "exports: $(echo "$want" | wc -l) functions, as declared"
exit $bad
