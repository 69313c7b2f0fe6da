#!/usr/bin/env bash
# setup.sh: install what the build needs when it is missing (Debian/Ubuntu).
# cmake, a C compiler, flex and bison; the CUDA toolkit's ptxas is optional
# (the ptxas tests are skipped without it).
set -eu
need=
command -v cmake >/dev/null || need="$need cmake"
command -v cc >/dev/null || need="$need gcc"
command -v flex >/dev/null || need="$need flex"
command -v bison >/dev/null || need="$need bison"
if [ -n "$need" ]; then
  echo "setup: installing$need"
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q $need >/dev/null 2>&1 ||
    { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q $need; }
fi
