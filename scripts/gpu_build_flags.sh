#!/usr/bin/env bash
# Which GPU flavour to build, from the GPU that is really in this machine: asks a CPU-only
# `strata devices --which --for-archs all` (it reads the drivers' files, sysfs and the runtimes'
# listings without any GPU toolkit), then checks that the matching toolkit is installed. Prints
# what it found and why it chose on stderr, and the CMake flags on stdout:
#   cuda 0 0000:01:00.0 sm_89 NVIDIA GeForce RTX 4090  → -DSTRATA_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=89
#   hip 1 0000:03:00.0 gfx1201 AMD Radeon RX 9070 XT   → clang-19 + -DSTRATA_HIP=ON -DSTRATA_HIP_ARCHITECTURES=gfx1201
#   cpu, or a GPU without its toolkit                  → -DSTRATA_CUDA=OFF (a CPU-only build)
# Usage: scripts/gpu_build_flags.sh STRATA_BINARY
# STRATA_WHICH_LINE replaces the query (tests); STRATA_NVCC / STRATA_HIP_CLANG / STRATA_HIP_HEADER
# name what the toolkits must provide (defaults: nvcc on PATH or /usr/local/cuda/bin/nvcc,
# clang++-19, /usr/include/hip/hip_runtime.h).
set -euo pipefail
strata=${1:?usage: gpu_build_flags.sh STRATA_BINARY}
line=${STRATA_WHICH_LINE:-$("$strata" devices --which --for-archs all 2>/dev/null || echo cpu)}
read -r backend _ordinal pci arch name <<<"$line" || true
say() { echo "strata setup: $*" >&2; }

nvcc=${STRATA_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
hip_clang=${STRATA_HIP_CLANG:-clang++-19}
hip_header=${STRATA_HIP_HEADER:-/usr/include/hip/hip_runtime.h}
case "$backend" in
  cuda)
    if [[ -x "$nvcc" || -n "$(command -v "$nvcc" 2>/dev/null)" ]]; then
      say "found $name ($arch, pci $pci): building the CUDA flavour for ${arch#sm_} only"
      echo "-DSTRATA_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=${arch#sm_}"
    else
      say "found $name ($arch, pci $pci) but no CUDA toolkit (nvcc): building for the CPU only; install the CUDA toolkit and run again to use the GPU"
      echo "-DSTRATA_CUDA=OFF"
    fi
    ;;
  hip)
    if command -v "$hip_clang" > /dev/null && [[ -e "$hip_header" ]]; then
      say "found $name ($arch, pci $pci): building the HIP flavour for $arch only"
      echo "-DSTRATA_CUDA=OFF -DSTRATA_HIP=ON -DSTRATA_HIP_ARCHITECTURES=$arch -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=$hip_clang"
    else
      say "found $name ($arch, pci $pci) but no HIP toolchain (clang-19, libamdhip64-dev): building for the CPU only; run STRATA_SETUP_HIP=1 scripts/setup.sh and again to use the GPU"
      echo "-DSTRATA_CUDA=OFF"
    fi
    ;;
  *)
    say "no usable GPU found (\`strata devices\` says why): building for the CPU only"
    echo "-DSTRATA_CUDA=OFF"
    ;;
esac
