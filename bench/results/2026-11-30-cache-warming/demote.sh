#!/usr/bin/env bash
# Every expert in RAM, tg128: warming with the read lines demoted to L3 (default), warming that
# leaves them where they were read (STRATA_TIERS_WARM=read), and no warming; alternated, 3 rounds.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
synth_model
cat "$model" > /dev/null
grep -o -w cldemote /proc/cpuinfo | head -1 > "$out/cldemote.txt"; echo "cldemote flag: $(cat $out/cldemote.txt)"
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu -p 0 -n 128 -r 2 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
for r in 1 2 3; do
  gpu ram_demote_r$r STRATA_TIERS_WARM=1 -- --expert-slots 0
  gpu ram_read_r$r STRATA_TIERS_WARM=read -- --expert-slots 0
  gpu ram_off_r$r STRATA_TIERS_WARM=0 -- --expert-slots 0
done
gpu b10_demote STRATA_TIERS_WARM=1 -- --vram-budget 10GiB
gpu b10_off STRATA_TIERS_WARM=0 -- --vram-budget 10GiB
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
