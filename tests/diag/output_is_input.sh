#!/bin/sh
# output_is_input.sh TLSC: an output that is the input file (the same path,
# another path to it, a hard link, a symbolic link either way, stdin or
# stdout redirected to or from it) is refused with exit status 2 before
# anything is written: the script stays as it was, with every output kind.
set -u
tlsc=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail() { echo "FAIL: $*"; cat err; ls -la; exit 1; }

cat > x.tls <<'TLS'
import tilus
from tilus import int32


class Blocks(tilus.Script):
    def __call__(self, n: int32):
        self.attrs.blocks = cdiv(n, 64)
        self.attrs.warps = 1
TLS
cp x.tls orig.tls
ln x.tls hard.tls
ln -s x.tls sym.tls
mkdir sub
ln -s ../x.tls sub/up.tls

# refused IN OUT [tlsc arguments]: exit 2 and the message naming both.
refused() {
  in=$1 out=$2
  shift 2
  "$tlsc" "$@" >/dev/null 2>err
  rc=$?
  [ $rc -eq 2 ] || fail "tlsc $*: exit status $rc, expected 2"
  grep -qF "tlsc: error: the output '$out' is the input file '$in'; refusing to overwrite it" err ||
    fail "tlsc $*: no message naming '$out' and '$in'"
  cmp -s x.tls orig.tls || fail "tlsc $* changed the script"
  [ -L sym.tls ] || fail "tlsc $* replaced the symbolic link"
  [ -z "$(ls | grep '\.tmp\.')" ] || fail "tlsc $* left a temporary file"
}
for kind in "" --emit=ast --emit=ir "--verify -p n=64"; do
  # $kind is split into words on purpose.
  refused x.tls x.tls $kind x.tls -o x.tls
  refused x.tls ./x.tls $kind x.tls -o ./x.tls
  refused x.tls "$dir/x.tls" $kind x.tls -o "$dir/x.tls"
  refused x.tls hard.tls $kind x.tls -o hard.tls
  refused x.tls sym.tls $kind x.tls -o sym.tls
  refused sym.tls x.tls $kind sym.tls -o x.tls
  refused x.tls sub/up.tls $kind x.tls -o sub/up.tls
  refused x.tls x.tls $kind -ox.tls x.tls
  refused '<stdin>' x.tls $kind - -o x.tls <x.tls
done
cmp -s hard.tls orig.tls || fail "the hard link changed"

# stdout appended to the script.
"$tlsc" --emit=ast x.tls >>x.tls 2>err
[ $? -eq 2 ] || fail "stdout onto the script: exit status is not 2"
grep -qF "tlsc: error: stdout is the input file 'x.tls'; refusing to overwrite it" err ||
  fail "stdout onto the script: no message"
cmp -s x.tls orig.tls || fail "stdout onto the script changed it"

# Not the same file: a copy, and a character device read and written.
cp x.tls copy.tls
"$tlsc" --emit=ast x.tls -o copy.tls 2>err || fail "-o onto a copy failed"
"$tlsc" --emit=ast /dev/null -o /dev/null 2>err || fail "/dev/null in and out failed"
echo ok
