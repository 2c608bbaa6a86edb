#!/usr/bin/env bash
# Builds the libraries Strata links, for 64-bit Windows (mingw-w64), into one prefix that the
# Windows build reads (cmake/windows/mingw-w64-x86_64.cmake). Every source is Debian's: the
# package sources (apt-get source, with Debian's patches) of fmt, PCRE2, ICU and cpp-httplib,
# GoogleTest's from libgtest-dev, the header-only JSON and CLI11 packages as installed.
# Idempotent: a library already in the prefix is not built again.
# Usage: scripts/windows_deps.sh [DIR (build-windows-deps)]; the prefix is DIR/prefix.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=$(realpath -m "${1:-build-windows-deps}")
prefix=$dir/prefix src=$dir/src
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/share/cmake" "$src"
toolchain=(-G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/cmake/windows/mingw-w64-x86_64.cmake"
           -DSTRATA_WINDOWS_PREFIX="$prefix" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release
           -DBUILD_SHARED_LIBS=OFF)
jobs=$(nproc)

source_of() {  # package: prints the folder of its unpacked Debian source (patched)
  local found
  found=$(find "$src" -maxdepth 1 -mindepth 1 -type d -name "$1-*" | head -1)
  if [[ -z $found ]]; then
    (cd "$src" && apt-get source -qq "$1" > /dev/null 2>&1) ||
      { echo "windows_deps: apt-get source $1 failed: is a deb-src line for Debian's archive configured? (scripts/setup.sh adds one with STRATA_SETUP_WINDOWS=1)" >&2; exit 1; }
    found=$(find "$src" -maxdepth 1 -mindepth 1 -type d -name "$1-*" | head -1)
  fi
  echo "$found"
}
cmake_install() {  # name source_dir args...: configures, builds and installs one library
  local name=$1 dir_src=$2; shift 2
  echo "windows_deps: $name"
  cmake -S "$dir_src" -B "$dir/build-$name" "${toolchain[@]}" "$@" > "$dir/$name.log" 2>&1 &&
    cmake --build "$dir/build-$name" -j "$jobs" >> "$dir/$name.log" 2>&1 &&
    cmake --install "$dir/build-$name" >> "$dir/$name.log" 2>&1 ||
    { tail -30 "$dir/$name.log"; echo "windows_deps: $name failed (log: $dir/$name.log)" >&2; exit 1; }
}

[[ -f $prefix/lib/libfmt.a ]] ||
  cmake_install fmt "$(source_of fmtlib)" -DFMT_TEST=OFF -DFMT_DOC=OFF
[[ -f $prefix/lib/libpcre2-8.a ]] ||
  cmake_install pcre2 "$(source_of pcre2)" -DPCRE2_SUPPORT_JIT=ON -DPCRE2_BUILD_PCRE2GREP=OFF \
    -DPCRE2_BUILD_TESTS=OFF -DPCRE2_SUPPORT_UNICODE=ON
# Its .pc omits the define a static PCRE2 needs (no dllimport).
grep -q PCRE2_STATIC "$prefix/lib/pkgconfig/libpcre2-8.pc" ||
  sed -i 's/^Cflags: .*/& -DPCRE2_STATIC/' "$prefix/lib/pkgconfig/libpcre2-8.pc"
[[ -f $prefix/lib/libicuuc.a ]] ||
  cmake_install icu "$root/cmake/windows/icu" -DICU_SOURCE="$(source_of icu)/source"
[[ -f $prefix/lib/libgtest.a ]] ||
  cmake_install googletest /usr/src/googletest -DBUILD_GMOCK=ON -DINSTALL_GTEST=ON

# Header-only libraries: the headers and CMake packages Debian installs are the same for any target.
if [[ ! -f $prefix/include/httplib.h ]]; then
  cp "$(source_of cpp-httplib)/httplib.h" "$prefix/include/"
  # Header-only use: no OpenSSL, no zlib; Winsock is the transport.
  printf 'prefix=%s\nName: cpp-httplib\nDescription: header-only HTTP server and client\nVersion: 0.11.4\nLibs: -lws2_32\nCflags: -I${prefix}/include\n' \
    "$prefix" > "$prefix/lib/pkgconfig/cpp-httplib.pc"
fi
for pkg in nlohmann_json:nlohmann CLI11:CLI; do
  cmake_dir=${pkg%%:*} include_dir=${pkg##*:}
  [[ -d $prefix/share/cmake/$cmake_dir ]] || cp -r "/usr/share/cmake/$cmake_dir" "$prefix/share/cmake/"
  [[ -d $prefix/include/$include_dir ]] || cp -r "/usr/include/$include_dir" "$prefix/include/"
done
echo "windows_deps: prefix $prefix ready"
