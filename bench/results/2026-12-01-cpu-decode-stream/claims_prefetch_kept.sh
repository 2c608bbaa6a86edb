#!/usr/bin/env bash
# Issue 4 (rerun with the software prefetches kept, e36a1b2): one-token matmul calls with uncapped guided claims and the prefetch running on into the
# next run of a claim (new), against 64-row claims and no prefetch across runs (old: the build's
# STRATA_X_CAP=1 STRATA_X_NONEXT=1 switches, experiment only), alternated: CPU decode on 16
# threads against the same-run bound, and the expert tiers' CPU lane with every expert in RAM;
# lane parity on the MoE fixtures with 2 expert slots.
source "$(dirname "$0")/device_common.sh" "$@"
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -3
done
model=${TMPDIR:-/tmp}/strata-synth8.gguf
layers=8 synth_model
cat "$model" > /dev/null
cpu() {  # name env... -- args
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device cpu "$@"
  echo "$name: $(grep -E 'DRAM|^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -3 | tr '\n' ' ')"
}
for r in 1 2 3; do
  cpu cpu_new_r$r X=1 -- -p 0 -n 64 -r 3
  cpu cpu_old_r$r STRATA_X_CAP=1 STRATA_X_NONEXT=1 -- -p 0 -n 64 -r 3
done
rm -f "$model"
model=${TMPDIR:-/tmp}/strata-synth.gguf
synth_model
cat "$model" > /dev/null
for r in 1 2; do
  bench_env ram_new_r$r X=1 -- -p 512 -n 128 -r 2 --expert-slots 0
  bench_env ram_old_r$r STRATA_X_CAP=1 STRATA_X_NONEXT=1 -- -p 512 -n 128 -r 2 --expert-slots 0
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
