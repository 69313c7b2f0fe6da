#!/usr/bin/env bash
# package_test.sh CMAKE BUILD_DIR CONSUMER_SRC WORK_DIR C_COMPILER [C_FLAGS]
#
# Installs the tlsc build BUILD_DIR into WORK_DIR/prefix (cmake --install),
# then configures, builds and runs the consumer project (a copy of
# CONSUMER_SRC) against that prefix only: find_package(tlsc),
# tlsc_add_kernel, a C program on tlsc::runtime. Then touches the copied
# .tls and checks that a rebuild recompiles the PTX. C_FLAGS go to the
# consumer's compile and link (the sanitizer build's libtlsrt needs them).
set -eu
cmake=$1 build=$2 consumer=$3 work=$4 cc=$5 flags=${6:-}

rm -rf "$work"
mkdir -p "$work"
"$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log"
cp -R "$consumer" "$work/src"

"$cmake" -S "$work/src" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  >"$work/configure.log"
"$cmake" --build "$work/build" >"$work/build.log"

# The kernel was compiled by the installed tlsc, not the build tree's.
grep -rqF --include=build.make --include=build.ninja "$work/prefix/bin/tlsc" "$work/build" || {
  echo "package_test: add_kernel does not run $work/prefix/bin/tlsc" >&2
  exit 1
}
"$work/build/add_demo"

# DEPENDS on the .tls: a newer script means a new PTX.
ptx=$work/build/add.ptx
before=$(stat -c %Y "$ptx")
sleep 1
touch "$work/src/add.tls"
"$cmake" --build "$work/build" >"$work/rebuild.log"
after=$(stat -c %Y "$ptx")
if [ "$before" = "$after" ]; then
  echo "package_test: touching add.tls did not recompile add.ptx" >&2
  exit 1
fi
echo "package_test: installed, found, compiled at build time, ran; rebuilt after a change"
