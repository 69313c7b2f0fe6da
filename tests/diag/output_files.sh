#!/bin/sh
# output_files.sh TLSC: how -o writes a file, as a compiler does. A new
# file gets 0666 less the umask; an existing file keeps its permission
# bits; a symbolic link (a chain, relative, dangling) is written through to
# its target and stays a link; a loop is an error. Long names work, and an
# error leaves neither a temporary file nor a changed target; -o '' is bad
# usage.
set -u
tlsc=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail() { echo "FAIL: $*"; cat err 2>/dev/null; ls -laR; exit 1; }
mode() { stat -c %a "$1"; }
no_temp() { [ -z "$(ls -R | grep '\.tmp\.')" ] || fail "a temporary file was left: $*"; }

printf 'x = 1\n' > good.tls
printf 'x = (1 +\n' > bad.tls
"$tlsc" --emit=ast good.tls > expected.txt || fail "good.tls did not compile"

# New files: 0666 less the umask (was always 0600).
for mask in 022 077 002 027; do
  want=$(umask $mask && touch ref_$mask && mode ref_$mask)
  (umask $mask && "$tlsc" --emit=ast -o new_$mask.txt good.tls) 2>err || fail "umask $mask"
  [ "$(mode new_$mask.txt)" = "$want" ] ||
    fail "umask $mask: new file has mode $(mode new_$mask.txt), expected $want"
done

# An existing file keeps its mode, even one that the umask would not give.
umask 022
for m in 640 604 444 755; do
  echo old > kept_$m.txt
  chmod $m kept_$m.txt
  "$tlsc" --emit=ast -o kept_$m.txt good.tls 2>err || fail "rewriting a file of mode $m"
  cmp -s kept_$m.txt expected.txt || fail "mode $m: wrong contents"
  [ "$(mode kept_$m.txt)" = $m ] || fail "mode $m became $(mode kept_$m.txt)"
done

# Symbolic links: written through, the link stays.
echo old > target.txt
chmod 640 target.txt
ln -s target.txt link.txt
"$tlsc" --emit=ast -o link.txt good.tls 2>err || fail "-o onto a link"
[ -L link.txt ] || fail "the link was replaced by a file"
cmp -s target.txt expected.txt || fail "the link's target does not hold the output"
[ "$(mode target.txt)" = 640 ] || fail "the target's mode became $(mode target.txt)"

mkdir -p a/b out
echo old > out/t.txt
ln -s ../../out/t.txt a/b/rel.txt # relative to the link's folder
ln -s a/b/rel.txt chain.txt       # a chain of two
"$tlsc" --emit=ast -o chain.txt good.tls 2>err || fail "-o onto a chain of links"
[ -L chain.txt ] && [ -L a/b/rel.txt ] || fail "a link of the chain was replaced"
cmp -s out/t.txt expected.txt || fail "the chain's target does not hold the output"

ln -s made.txt dangling.txt
"$tlsc" --emit=ast -o dangling.txt good.tls 2>err || fail "-o onto a dangling link"
[ -L dangling.txt ] || fail "the dangling link was replaced"
cmp -s made.txt expected.txt || fail "the dangling link's target was not created"
[ "$(mode made.txt)" = 644 ] || fail "the created target has mode $(mode made.txt)"

ln -s loop1 loop2
ln -s loop2 loop1
"$tlsc" --emit=ast -o loop1 good.tls 2>err
[ $? -eq 1 ] || fail "-o onto a loop of links: exit status is not 1"
grep -qF "tlsc: error: cannot write 'loop1': Too many levels of symbolic links" err ||
  fail "-o onto a loop of links: no message"

# An error through a link: the target keeps its contents, no temporary file
# in either folder.
"$tlsc" --emit=ast -o chain.txt bad.tls 2>err
[ $? -eq 1 ] || fail "bad.tls through a link: exit status is not 1"
cmp -s out/t.txt expected.txt || fail "an error changed the link's target"
no_temp "after an error through a link"

# /dev/stdout: onto a pipe it is written in place (not followed to the
# pipe's /proc name); onto a file, that file receives the output.
"$tlsc" --emit=ast -o /dev/stdout good.tls 2>err | cat > piped.txt
cmp -s piped.txt expected.txt || fail "-o /dev/stdout onto a pipe"
"$tlsc" --emit=ast -o /dev/stdout good.tls 2>err > redirected.txt ||
  fail "-o /dev/stdout onto a file failed"
cmp -s redirected.txt expected.txt || fail "-o /dev/stdout onto a file"
no_temp "after -o /dev/stdout"

# A name of 250 bytes (the temporary name must stay within NAME_MAX).
long=$(printf '%0250d' 0)
"$tlsc" --emit=ast -o "$long" good.tls 2>err || fail "-o with a 250-byte name"
cmp -s "$long" expected.txt || fail "the 250-byte name does not hold the output"
no_temp "after writing a long name"
# An empty name is bad usage (it was written to a temporary file whose
# rename failed).
"$tlsc" --emit=ast -o '' good.tls 2>err
[ $? -eq 2 ] || fail "-o '': exit status is not 2"
grep -qF "tlsc: error: -o needs a file name" err || fail "-o '': no message"
no_temp "after -o ''"
echo ok
