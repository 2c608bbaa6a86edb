#!/usr/bin/env bash
# CPU decode at 16/8 threads and the GPU's CPU lane: matmul row block and prefetch window A/B.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
layers=8 synth_model
cat "$model" > /dev/null
run() {  # name threads env...
  local name=$1 t=$2; shift 2
  step "$name" 200 env STRATA_X_STATS=1 "$@" "$bin/strata" bench -m "$model" --device cpu -t "$t" -p 0 -n 64 -r 3
  echo "$name: $(grep -E '^\|.*tg[0-9]|XSTATS|bandwidth' "$out/$name.txt" | sed 's/(16 threads.*MiB)//' | tr -s ' ' | tr '\n' ' ')"
}
for r in 1 2 3; do
  run base_r$r 16
  run rb64pf2k_r$r 16 STRATA_X_ROW_BLOCK=64 STRATA_X_PF_BYTES=2048
  run rb64pf2kt1_r$r 16 STRATA_X_ROW_BLOCK=64 STRATA_X_PF_BYTES=2048 STRATA_X_PF_HINT=2
  run rb128pf2k_r$r 16 STRATA_X_ROW_BLOCK=128 STRATA_X_PF_BYTES=2048
  run rb64pf2kpin_r$r 16 STRATA_X_ROW_BLOCK=64 STRATA_X_PF_BYTES=2048 STRATA_X_PIN=1
done
for r in 1 2; do
  run t8base_r$r 8
  run t8rb64pf2k_r$r 8 STRATA_X_ROW_BLOCK=64 STRATA_X_PF_BYTES=2048
done
rm -f "$model"
model=MODEL
layers=48 synth_model
gpu() {  # name env...
  local name=$1; shift
  step "$name" 300 env "$@" "$bin/strata" bench -m "$model" --device gpu -p 0 -n 128 -r 2 $args
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2; do
  args="--expert-slots 0"
  gpu ram_base_r$r STRATA_X_ROW_BLOCK=16
  gpu ram_rb64pf2k_r$r STRATA_X_ROW_BLOCK=64 STRATA_X_PF_BYTES=2048
  args="--vram-budget 10GiB"
  gpu b10_base_r$r STRATA_X_ROW_BLOCK=16
  gpu b10_rb64pf2k_r$r STRATA_X_ROW_BLOCK=64 STRATA_X_PF_BYTES=2048
done
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
