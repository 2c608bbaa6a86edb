#!/usr/bin/env bash
# The GPU engine on a GPU machine, in one go: the GPU test suite, the streamed-equals-resident
# expert check, `strata parity --device gpu` on the fixtures, `strata devices --selftest`, then the
# BENCHMARKS.md synthetic Qwen3-30B-A3B (48 layers) all in VRAM with the int8 and the float
# matrix-vector kernels (STRATA_GPU_MATVEC=f32), decode at depths 2048 and 8192, an op profile of
# decode, prompt batches of 4096, the tiered scenarios (10 and 16 GiB budgets, all experts in RAM
# with each miss lane), the server under 1/4/16 clients, and with SKEWED=S set the skewed-routing
# scenarios. Logs go to OUT_DIR; a summary to stdout.
# Usage: [SKEWED=S] [KEEP_MODEL=1] scripts/device_gpu_decode.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
# (KEEP_MODEL=1 leaves the synthetic model in /tmp for a later run, which then skips making it.)
# BIN_DIR holds strata and strata_gpu_tests (scripts/device_bundle.sh; LD_LIBRARY_PATH set by the caller).
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"

step gpu_tests 240 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|Failure|SKIPPED|FAIL$" "$out/gpu_tests.txt" | head -30

# Streamed experts must give the all-resident model's logits bit for bit: the 8-layer synthetic
# model stands in for the fixture (the HF-reference cases skip: it has no reference logits).
mkdir -p /tmp/synthdata/models
step synth8 120 "$bin/strata" synth --preset qwen3-30b-a3b --layers 8 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" \
  -o /tmp/synthdata/models/qwen3moe.gguf
STRATA_TESTDATA=/tmp/synthdata step tier_exact_synth8 120 "$bin/strata_gpu_tests" --gtest_filter='GpuExpertTiersExact*'
grep -E "OK|FAILED|PASSED|Failure|differ" "$out/tier_exact_synth8.txt" | head
rm -rf /tmp/synthdata

# Model parity against the HF logits, on the GPU, for every fixture with a GPU forward, and the
# device self-test (memory, link, a kernel per op family against the CPU).
for ref in "$data"/models/*.ref.gguf; do
  name=$(basename "$ref" .ref.gguf)
  step "parity_$name" 60 "$bin/strata" parity --device gpu -m "$data/models/$name.gguf" --ref "$ref"
  tail -3 "$out/parity_$name.txt"
done
step selftest 120 "$bin/strata" devices --selftest
tail -30 "$out/selftest.txt"

model=/tmp/strata-synth-${layers}l.gguf
[[ -f "$model" ]] || synth_model
bench vram -p 512 -n 128 -r 3
STRATA_GPU_MATVEC=f32 bench vram_f32 -p 0 -n 128 -r 3
bench vram_depth2048 -p 0 -n 64 -r 2 -d 2048
bench vram_depth8192 -p 0 -n 128 -r 2 -d 8192
step profile_vram 120 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 32 -r 1 --gpu-profile
tail -32 "$out/profile_vram.txt"
bench vram_pp4096 -p 4096 -n 0 -r 1 -b 4096
bench budget10 -p 512 -n 64 -r 2 --vram-budget 10GiB
bench budget16 -p 512 -n 64 -r 2 --vram-budget 16GiB
bench ram_auto -p 512 -n 64 -r 2 --expert-slots 0
bench ram_cpu -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane cpu
bench ram_stream -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane stream

# The server under 1, 4 and 16 concurrent clients (strata loadgen), the model on the GPU.
serve_load vram
[[ -n "${KEEP_MODEL:-}" ]] || rm -f "$model"

# Skewed routing (a Zipf exponent per layer, BENCHMARKS.md): what the cache policies make of a hot set.
if [[ -n "${SKEWED:-}" ]]; then
  model=/tmp/strata-synth-${layers}l-skew${SKEWED}.gguf
  step synth_skew 300 "$bin/strata" synth --preset qwen3-30b-a3b --layers "$layers" --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" \
    --router-skew "$SKEWED" -o "$model"
  bench skew_budget10_lru -p 512 -n 64 -r 2 --vram-budget 10GiB --expert-policy lru
  bench skew_budget10_lfu -p 512 -n 64 -r 2 --vram-budget 10GiB --expert-policy lfu
  bench skew_ram_auto -p 0 -n 64 -r 2 --expert-slots 0
  rm -f "$model"
fi
