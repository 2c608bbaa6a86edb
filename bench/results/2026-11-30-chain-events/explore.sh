#!/usr/bin/env bash
# Issue 9 (every expert in RAM, tg) and issue 4 (CPU streaming): where the decode step's serial
# chain goes, and three experiment switches, alternated.
source "$(dirname "$0")/device_common.sh" "$@"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
step dotrows 240 "$bin/dot_rows_bench" --benchmark_filter='each' --benchmark_min_time=0.5
grep -E "each" "$out/dotrows.txt" | tr -s ' ' | cut -d' ' -f1,6-
gpu tl_base STRATA_TIERS_TIMELINE=60 -- -p 0 -n 128 -r 1 --expert-slots 0
gpu tl_stage STRATA_TIERS_TIMELINE=60 STRATA_TIERS_SUM_STAGE=1 -- -p 0 -n 128 -r 1 --expert-slots 0
gpu prof_ram X=1 -- -p 0 -n 64 -r 1 --expert-slots 0 --gpu-profile
gpu prof_vram X=1 -- -p 0 -n 64 -r 1 --gpu-profile
for r in 1 2; do
  gpu base_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu pf4k_r$r STRATA_CPU_PREFETCH_BYTES=4096 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu extra5_r$r STRATA_TIERS_PREFETCH_EXTRA=0.5 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu pf8k_r$r STRATA_CPU_PREFETCH_BYTES=8192 -- -p 0 -n 128 -r 2 --expert-slots 0
done
step synth8 120 "$bin/strata" synth --preset qwen3-30b-a3b --layers 8 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" -o /tmp/s8.gguf
cat /tmp/s8.gguf > /dev/null
for r in 1 2; do
  for w in 2048 4096 8192; do
    step cpu_w${w}_r$r 120 env STRATA_CPU_PREFETCH_BYTES=$w "$bin/strata" bench -m /tmp/s8.gguf --device cpu -p 0 -n 64 -r 3
    echo "cpu_w${w}_r$r: $(grep -E '^\|.*tg[0-9]' "$out/cpu_w${w}_r$r.txt" | tr -s ' ')"
  done
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
