#!/usr/bin/env bash
# Issue 9, prompts with experts off the GPU, after the admission fix: the copies ahead of scan
# steps against none (STRATA_TIERS_STREAM_AHEAD=0), the CPU lane's sum read by the combine through
# the mapping (STRATA_TIERS_LANE_SUM=mapped) and a ring of 128 staging slots instead of 64
# (STRATA_TIERS_STAGING=128, every expert in RAM only), alternated; the link's busy time per token
# in every line. Then tg128, the GPU suite and tier parity with 2 slots.
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
for r in 1 2; do
  gpu new10_r$r X=1 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu noahead10_r$r STRATA_TIERS_STREAM_AHEAD=0 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu mapped10_r$r STRATA_TIERS_LANE_SUM=mapped -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu newram_r$r X=1 -- -p 512 -n 0 -r 3 --expert-slots 0
  gpu noaheadram_r$r STRATA_TIERS_STREAM_AHEAD=0 -- -p 512 -n 0 -r 3 --expert-slots 0
  gpu mappedram_r$r STRATA_TIERS_LANE_SUM=mapped -- -p 512 -n 0 -r 3 --expert-slots 0
  gpu ring128ram_r$r STRATA_TIERS_STAGING=128 -- -p 512 -n 0 -r 3 --expert-slots 0
  gpu newram4096_r$r X=1 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
  gpu ring128ram4096_r$r STRATA_TIERS_STAGING=128 -- -p 4096 -b 4096 -n 0 -r 2 --expert-slots 0
done
gpu stream_ram X=1 -- -p 512 -n 0 -r 3 --expert-slots 0 --miss-lane stream
gpu new10_tg X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
gpu newram_tg X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
for m in qwen3moe deepseek3 gptoss qwen35moe; do
  step "parity_tiny_$m" 120 "$bin/strata" parity --device gpu --expert-slots 2 -m "$data/models/$m.gguf" --ref "$data/models/$m.ref.gguf"
  grep -E "PASS|FAIL|error" "$out/parity_tiny_$m.txt" | head -4
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
