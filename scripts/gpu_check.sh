#!/usr/bin/env bash
# The GPU checks that need a real device, in one go (what the device machine runs): build for
# this GPU's architecture, the op-parity and model-parity suites, `strata parity --device gpu`
# on the reference models in both modes, and a CPU vs GPU `strata bench` of an 8-layer synthetic
# Qwen3-30B-A3B. Every log goes to OUT_DIR.
# Usage: scripts/gpu_check.sh OUT_DIR [CUDA_ARCH (90)] [TESTDATA (../shared/testdata)]
# With STRATA_BIN=DIR the binaries in DIR are used and nothing is built (a device machine without
# the project's Debian packages runs binaries built elsewhere, with LD_LIBRARY_PATH set).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu_check.sh OUT_DIR [CUDA_ARCH] [TESTDATA]}
arch=${2:-90}
data=$(realpath "${3:-../shared/testdata}")
mkdir -p "$out"
export STRATA_TESTDATA=$data

(env -u LD_LIBRARY_PATH nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true) > "$out/gpu.txt" 2>&1
if [[ -n "${STRATA_BIN:-}" ]]; then
  bin=$STRATA_BIN
else
  start=$(date +%s)
  cmake -S . -B build-device -G Ninja -DCMAKE_CUDA_ARCHITECTURES="$arch" -DSTRATA_BUILD_BENCH=OFF > "$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; exit 1; }
  cmake --build build-device -j "$(nproc)" --target strata strata_gpu_tests > "$out/build.log" 2>&1 ||
    { grep -m5 -A5 error "$out/build.log"; exit 1; }
  echo "build: $(( $(date +%s) - start )) s" | tee "$out/times.txt"
  bin=build-device/bin
fi

# One suite at a time, so that a crash in one still leaves the others' results.
for suite in 'GpuOps.*' 'GpuAttention.*' 'GpuMoe.*' '*GpuModelParity*:GpuModelSelection.*'; do
  t=$(date +%s)
  timeout 300 "$bin/strata_gpu_tests" --gtest_filter="$suite" >> "$out/gpu_tests.log" 2>&1
  echo "gpu tests $suite: exit $?, $(( $(date +%s) - t )) s" | tee -a "$out/times.txt"
done
grep -E "^op-parity|^gpu-parity|FAILED|PASSED|SKIPPED|Abort|error" "$out/gpu_tests.log" | grep -v " ok$" | head -40

for m in llama qwen3 qwen3moe mixtral; do
  for chunk in 0 1; do
    timeout 60 "$bin/strata" parity --device gpu -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf" --chunk $chunk
  done
done > "$out/parity.log" 2>&1
grep -c PASS "$out/parity.log" | sed 's/^/parity PASS lines: /'; grep -E "FAIL|strata parity" "$out/parity.log"

synth=/tmp/strata-synth-qwen3-30b-a3b-8l.gguf
t=$(date +%s)
timeout 120 "$bin/strata" synth --preset qwen3-30b-a3b --layers 8 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" \
  -o "$synth" > "$out/synth.log" 2>&1
echo "synth: exit $?, $(( $(date +%s) - t )) s" | tee -a "$out/times.txt"
for device in gpu cpu; do
  t=$(date +%s)
  timeout 150 "$bin/strata" bench -m "$synth" --device "$device" -p 512 -n 128 -r 3 > "$out/bench_$device.txt" 2>&1
  cat "$out/bench_$device.txt"
  echo "bench $device: $(( $(date +%s) - t )) s" | tee -a "$out/times.txt"
done
rm -f "$synth"

# How long nvcc takes for the kernels, one architecture, all files at once.
if command -v nvcc > /dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  t=$(date +%s)
  for f in src/backend/gpu/*.cu; do
    env -u LD_LIBRARY_PATH timeout 120 "$nvcc" -std=c++20 -O3 --expt-relaxed-constexpr -Isrc -arch="sm_$arch" -c "$f" -o "/tmp/$(basename "$f").o" &
  done
  wait
  echo "nvcc, all kernel files in parallel, sm_$arch: $(( $(date +%s) - t )) s" | tee -a "$out/times.txt"
fi
