#!/bin/sh
# source_limit.sh TLSC: a source over TLSC_MAX_SOURCE_BYTES (256 MiB) is
# refused while it is read, from a file, a device or stdin: /dev/zero stops
# at the limit instead of filling memory. One that is exactly the limit is
# read (and refused later for its NUL bytes).
set -u
tlsc=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
limit=268435456
fail() { echo "FAIL: $*"; head -c 300 err; echo; exit 1; }

# Bound the address space where the build allows it (ASan reserves
# terabytes): without the limit, /dev/zero was read until malloc failed.
bound=:
if (ulimit -v 3000000 && "$tlsc" --version) >/dev/null 2>&1; then bound='ulimit -v 3000000'; fi

# refused NAME CMD...: exit 1 and the message naming NAME.
refused() {
  name=$1
  shift
  (eval "$bound" && timeout 60 "$@") >/dev/null 2>err
  rc=$?
  [ $rc -eq 1 ] || fail "$*: exit status $rc, expected 1"
  [ "$(cat err)" = "tlsc: error: '$name': larger than the $limit-byte limit" ] ||
    fail "$*: not the message for '$name'"
}
refused /dev/zero "$tlsc" /dev/zero
refused '<stdin>' sh -c '"$1" - </dev/zero' sh "$tlsc"
refused '<stdin>' sh -c 'head -c $(($2 + 1)) /dev/zero | "$1" -' sh "$tlsc" $limit
truncate -s $((limit + 1)) big.tls # sparse: no disk space used
refused big.tls "$tlsc" big.tls

# Exactly the limit: read, then refused by the lexer for its NUL bytes.
truncate -s $limit big.tls
(eval "$bound" && timeout 60 "$tlsc" big.tls) >/dev/null 2>err
grep -q "^big.tls:1:1: error: source contains a NUL byte" err || fail "a file of $limit bytes"
(eval "$bound" && head -c $limit /dev/zero | timeout 60 "$tlsc" -) >/dev/null 2>err
grep -q "^<stdin>:1:1: error: source contains a NUL byte" err || fail "stdin of $limit bytes"
echo ok
