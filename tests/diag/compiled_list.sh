#!/bin/sh
# compiled_list.sh TLSC TLSRUN SCRIPT [TLSC ARGS...]: compiles SCRIPT to a
# temporary PTX file and prints what libtlsrt reads back from its metadata
# (`tlsrun --list`): the writer and the reader of docs/format.md agree.
set -u
tlsc=$1 tlsrun=$2 script=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$tlsc" "$@" "$script" -o "$dir/out.ptx" || exit 1
"$tlsrun" "$dir/out.ptx" --list
