#!/usr/bin/env bash
# Expert tiers on a GPU machine, in one go: the tier tests (GPU vs HF logits, streamed vs resident
# bit for bit), `strata parity` with a tiny expert cache, then the BENCHMARKS.md synthetic
# Qwen3-30B-A3B (48 layers) in the scenarios of issue 9: everything in VRAM, all experts in RAM
# (no cache slots; each miss lane), and VRAM budgets of 10 and 16 GiB. Logs go to OUT_DIR.
# Usage: scripts/device_expert_tiers.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] [SKEW (0)]
# BIN_DIR holds strata and strata_gpu_tests (built elsewhere; LD_LIBRARY_PATH set by the caller).
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
skew=${extra[0]:-0}

step gpu_tests 240 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|Failure|SKIPPED" "$out/gpu_tests.txt" | head -20
step parity_tiny_cache 60 "$bin/strata" parity --device gpu -m "$data/models/qwen3moe.gguf" --ref "$data/models/qwen3moe.ref.gguf" --expert-slots 2
cat "$out/parity_tiny_cache.txt"

# The streamed-equals-resident check again on real expert sizes: the 8-layer synthetic model
# stands in for the fixture (the HF-reference cases skip: it has no reference logits).
mkdir -p /tmp/synthdata/models
step synth8 120 "$bin/strata" synth --preset qwen3-30b-a3b --layers 8 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" \
  -o /tmp/synthdata/models/qwen3moe.gguf
STRATA_TESTDATA=/tmp/synthdata step tier_exact_synth8 120 "$bin/strata_gpu_tests" --gtest_filter='GpuExpertTiersExact*'
grep -E "OK|FAILED|PASSED|Failure|differ" "$out/tier_exact_synth8.txt" | head
rm -rf /tmp/synthdata

model=/tmp/strata-synth-${layers}l-skew${skew}.gguf
skew_flag=()
[[ "$skew" != 0 ]] && skew_flag=(--router-skew "$skew")
synth_model "${skew_flag[@]}"
bench vram -p 512 -n 128 -r 3
bench vram_depth8192 -p 0 -n 128 -r 2 -d 8192
step profile_vram 120 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 32 -r 1 --gpu-profile
tail -30 "$out/profile_vram.txt"
bench ram_auto -p 512 -n 64 -r 2 --expert-slots 0
bench ram_auto_pp4096 -p 4096 -n 0 -r 1 -b 4096 --expert-slots 0
bench ram_cpu -p 0 -n 64 -r 2 --expert-slots 0 --miss-lane cpu
bench ram_stream -p 512 -n 64 -r 2 --expert-slots 0 --miss-lane stream
bench budget10 -p 512 -n 64 -r 2 --vram-budget 10GiB
bench budget16 -p 512 -n 64 -r 2 --vram-budget 16GiB
rm -f "$model"

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
