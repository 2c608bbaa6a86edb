#!/usr/bin/env bash
# Installs every Debian package that building and testing Strata needs. Idempotent: packages that
# are already installed are left alone, and apt is not touched at all when nothing is missing.
# GPU toolchains are optional: CUDA builds when nvcc is found (/usr/local/cuda), HIP when
# clang-19 and the ROCm packages are installed (see docs/AMD_BUILD.md; not installed here by default).
# STRATA_SETUP_TRAINING=1 adds what tools/builtin_model/ needs to remake the built-in model's
# data (the King James Bible text); the normal build never needs it.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev     # tests and benchmarks
  nlohmann-json3-dev libfmt-dev libcli11-dev      # JSON, formatting, command line
  libpcre2-dev libicu-dev                         # Unicode-aware regex for the tokenizers
  libcpp-httplib-dev                              # HTTP server
  clang libclang-rt-14-dev                        # libFuzzer targets
  curl python3                                    # end-to-end test scripts (HTTP client, JSON checks)
  nodejs chromium                                 # tests/clients: the openai npm client, the page in a browser
)
# Debian's npm only when no npm is there: NodeSource's nodejs (Node 20) bundles npm and conflicts
# with Debian's npm package. Debian 12's own nodejs is 18; tests/cli/clients.sh skips below 20.
if ! command -v npm > /dev/null; then packages+=(npm); fi
if [[ "${STRATA_SETUP_TRAINING:-0}" == "1" ]]; then
  packages+=(bible-kjv bible-kjv-text python3)
fi
# STRATA_SETUP_WINDOWS=1: the Windows build (docs/WINDOWS.md): clang-19 with mingw-w64's runtime,
# Wine for its tests, dpkg-dev for `apt-get source` of the libraries built for Windows.
if [[ "${STRATA_SETUP_WINDOWS:-0}" == "1" ]]; then
  packages+=(clang-19 g++-mingw-w64-x86-64-posix wine64 dpkg-dev)
fi
if [[ "${STRATA_SETUP_HIP:-0}" == "1" ]]; then
  packages+=(clang-19 lld-19 clang-tools-19 libamdhip64-dev rocm-device-libs)
fi

# scripts/windows_deps.sh fetches Debian's sources: apt needs a deb-src line for the archive.
deb_src_needed=0
if [[ "${STRATA_SETUP_WINDOWS:-0}" == "1" ]] && ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  deb_src_needed=1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0 && deb_src_needed == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
if ((deb_src_needed)); then
  suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$suite" | "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/strata-deb-src.sources > /dev/null
  echo "setup: added Debian's deb-src line (for scripts/windows_deps.sh)"
fi
echo "setup: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
