#!/usr/bin/env bash
# Packs built executables with the shared libraries they link (those a bare GPU machine may lack:
# fmt, spdlog, curl, ...; not the C library or the GPU driver) into one tar.xz, for running tests
# and benchmarks on a machine without the build's packages. Unpack and run with
# LD_LIBRARY_PATH=<dir>/lib <dir>/bin/<exe>.
# Usage: scripts/device_bundle.sh OUT.tar.xz EXE...
set -euo pipefail
out=${1:?usage: OUT.tar.xz EXE...}
shift
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for exe in "$@"; do
  strip -o "$stage/bin/$(basename "$exe")" "$exe"
  ldd "$exe" | awk '/=> \// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libc.so*|libm.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*|libcuda.so*|libnvidia*) ;;
      *) cp -L "$lib" "$stage/lib/" ;;
    esac
  done
done
tar -C "$stage" -cJf "$out" bin lib
echo "$out: $(du -h "$out" | cut -f1)"
