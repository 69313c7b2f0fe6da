#!/usr/bin/env bash
# layering.sh ROOT: every project #include in a folder names a header that
# folder may include (docs/architecture.md, "may include"), and private
# headers (*_int.h, parse.h, rt_internal.h, cuda_api.h) stay in their folder.
set -u
root=$1
cd "$root" || exit 2
allowed() { # folder -> the folders whose headers it may include
  case $1 in
    base) echo "base" ;;
    frontend) echo "base frontend" ;;
    ir) echo "base ir" ;;
    eval) echo "base frontend ir eval" ;;
    sim) echo "base ir sim" ;;
    backend_ptx) echo "base ir backend_ptx" ;;
    runtime) echo "runtime" ;;
    tools/tlsrun) echo "runtime/tlsrt.h tools/tlsrun" ;;
    driver) echo "base frontend ir eval sim backend_ptx" ;;
  esac
}
private='(_int\.h|/parse\.h|/rt_internal\.h|/cuda_api\.h)$'
bad=0
for dir in base frontend ir eval sim backend_ptx runtime tools/tlsrun driver; do
  ok=$(allowed "$dir")
  for f in "$dir"/*.c "$dir"/*.h "$dir"/*.l "$dir"/*.y; do
    [ -e "$f" ] || continue
    while IFS= read -r inc; do
      hit=0
      for a in $ok; do
        case $inc in "$a" | "$a"/*) hit=1 ;; esac
      done
      if [ $hit = 0 ]; then
        echo "layering: $f includes \"$inc\": $dir may include only: $ok"
        bad=1
      elif [[ $inc =~ $private ]] && [ "${inc%/*}" != "$dir" ]; then
        echo "layering: $f includes \"$inc\", private to ${inc%/*}"
        bad=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  done
done
[ $bad = 0 ] && echo "layering: every include is allowed"
exit $bad
