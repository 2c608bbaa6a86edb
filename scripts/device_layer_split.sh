#!/usr/bin/env bash
# A model split by layers over two GPUs (--split layer), on a two-GPU machine, in one go: the GPU
# tests (the split equals one GPU bit for bit; tiers per GPU match HF), `strata parity` of every
# fixture with the layers split over GPUs 0 and 1, then the BENCHMARKS.md synthetic Qwen3-30B-A3B
# with every expert in VRAM (one GPU vs two) and with expert tiers: 10 GiB on each of two GPUs vs
# one GPU with 10 GiB and with 20 GiB. On a one-GPU machine the "two GPUs" are two shares of GPU 0.
# Logs go to OUT_DIR. Usage: scripts/device_layer_split.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)]
# BIN_DIR holds strata and strata_gpu_tests (built elsewhere; LD_LIBRARY_PATH set by the caller).
set -uo pipefail
export NCCL_NVLS_ENABLE=0  # never NVLink multicast (nothing here uses NCCL yet; set for safety)
source "$(dirname "$0")/device_common.sh" "$@"
env -u LD_LIBRARY_PATH nvidia-smi topo -m >> "$out/machine.txt" 2>&1
gpus=0,1
[[ $(env -u LD_LIBRARY_PATH nvidia-smi -L | wc -l) -ge 2 ]] || gpus=0,0

step gpu_tests 300 "$bin/strata_gpu_tests"
grep -E "FAILED|PASSED|Failure|SKIPPED|gpu-split" "$out/gpu_tests.txt" | head -30
step devices 60 "$bin/strata" devices
head -20 "$out/devices.txt"
for m in llama qwen3 qwen3moe mixtral; do
  step "parity_split_$m" 120 "$bin/strata" parity --gpus "$gpus" -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|nmse|split|error" "$out/parity_split_$m.txt" | head -6
done

model=/tmp/strata-synth-${layers}l.gguf
synth_model
bench_device=()  # each run names its GPUs
bench one_vram --device 0 -p 512 -n 128 -r 3
bench split_vram --gpus "$gpus" -p 512 -n 128 -r 3
bench one_10g --device 0 -p 512 -n 128 -r 2 --vram-budget 10GiB
bench one_20g --device 0 -p 512 -n 128 -r 2 --vram-budget 20GiB
bench split_10g_each --gpus "$gpus" -p 512 -n 128 -r 2 --vram-budget 10GiB
# Tiers on both GPUs: two 6 GiB budgets against one GPU of 12 GiB.
bench one_12g --device 0 -p 512 -n 128 -r 2 --vram-budget 12GiB
bench split_6g_each --gpus "$gpus" -p 512 -n 128 -r 2 --vram-budget 6GiB
step plan_split 60 "$bin/strata" plan -m "$model" --vram 10GiB,10GiB
cat "$out/plan_split.txt" | head -40
rm -f "$model"

if [[ -n "${SKEWED:-}" ]]; then
  model=/tmp/strata-synth-${layers}l-skew${SKEWED}.gguf
  step synth_skew 300 "$bin/strata" synth --preset qwen3-30b-a3b --layers "$layers" --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" \
    --router-skew "$SKEWED" -o "$model"
  bench skew_one_10g --device 0 -p 512 -n 128 -r 2 --vram-budget 10GiB
  bench skew_one_20g --device 0 -p 512 -n 128 -r 2 --vram-budget 20GiB
  bench skew_split_10g_each --gpus "$gpus" -p 512 -n 128 -r 2 --vram-budget 10GiB
  bench skew_one_12g --device 0 -p 512 -n 128 -r 2 --vram-budget 12GiB
  bench skew_split_6g_each --gpus "$gpus" -p 512 -n 128 -r 2 --vram-budget 6GiB
  rm -f "$model"
fi
