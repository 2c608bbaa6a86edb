#!/usr/bin/env bash
# Issue 9: the CPU lane's sum read by the combine through the mapping at every size (default now)
# against copied when over 64 KiB (STRATA_TIERS_LANE_SUM=copy), pp512, alternated; decode with the
# link's clock on and off (STRATA_TIERS_LINK_CLOCK=0), alternated; an event timeline of one
# prompt pass (a diagnostic build only: STRATA_TIERS_TIMELINE); then the GPU suite.
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
gpu tl10 STRATA_TIERS_TIMELINE=3 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
gpu tl10_noahead STRATA_TIERS_TIMELINE=3 STRATA_TIERS_STREAM_AHEAD=0 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
gpu tlram STRATA_TIERS_TIMELINE=3 -- -p 512 -n 0 -r 3 --expert-slots 0
for r in 1 2 3; do
  gpu ramtg_r$r X=1 -- -p 0 -n 128 -r 2 --expert-slots 0
  gpu ramtg_noclock_r$r STRATA_TIERS_LINK_CLOCK=0 -- -p 0 -n 128 -r 2 --expert-slots 0
done
for r in 1 2; do
  gpu tg10_r$r X=1 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
  gpu tg10_noclock_r$r STRATA_TIERS_LINK_CLOCK=0 -- -p 0 -n 128 -r 2 --vram-budget 10GiB
  gpu pp10_r$r X=1 -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu pp10_copy_r$r STRATA_TIERS_LANE_SUM=copy -- -p 512 -n 0 -r 3 --vram-budget 10GiB
  gpu ppram_r$r X=1 -- -p 512 -n 0 -r 3 --expert-slots 0
  gpu ppram_copy_r$r STRATA_TIERS_LANE_SUM=copy -- -p 512 -n 0 -r 3 --expert-slots 0
done
step gpu_tests 400 "$bin/strata_gpu_tests"
tail -3 "$out/gpu_tests.txt"; grep -E "FAILED" "$out/gpu_tests.txt" | head
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
