#!/bin/sh
# no_partial_output.sh TLSC: an error must leave no output file (and no
# temporary one), and must not clobber a file that was already there;
# success must write the whole output through -o.
set -u
tlsc=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail() { echo "FAIL: $*"; ls -la; exit 1; }

printf 'x = (1 +\n' > bad.tls
"$tlsc" --emit=ast -o out.txt bad.tls 2>/dev/null
[ $? -eq 1 ] || fail "exit status is not 1 on a syntax error"
[ ! -e out.txt ] || fail "an error left out.txt behind"
[ -z "$(ls | grep '\.tmp\.')" ] || fail "an error left a temporary file"

echo "old contents" > kept.txt
"$tlsc" --emit=ast -o kept.txt bad.tls 2>/dev/null
[ "$(cat kept.txt)" = "old contents" ] || fail "an error clobbered kept.txt"

printf 'x = 1\n' > good.tls
"$tlsc" --emit=ast -o good.txt good.tls || fail "good.tls did not compile"
"$tlsc" --emit=ast good.tls > expected.txt
cmp -s good.txt expected.txt || fail "-o wrote something else than stdout"
[ -z "$(ls | grep '\.tmp\.')" ] || fail "success left a temporary file"
mkdir sub
"$tlsc" --emit=ast -o sub good.tls 2>/dev/null
[ $? -eq 1 ] || fail "writing onto a directory did not fail with status 1"
[ -z "$(ls sub)" ] || fail "writing onto a directory left a file in it"
# A special file (here a FIFO, never a system file) is written in place,
# not replaced by a rename.
mkfifo pipe
cat pipe > from_pipe.txt &
"$tlsc" --emit=ast -o pipe good.tls || fail "-o onto a FIFO failed"
wait
[ -p pipe ] || fail "the FIFO was replaced by a regular file"
cmp -s from_pipe.txt expected.txt || fail "the FIFO did not carry the output"
echo ok
