#!/usr/bin/env bash
# The session's final build on the synthetic Qwen3-30B-A3B: everything in VRAM (the decode profile,
# tg128, pp512, tg128 at depth 8192), then issue 9's scenarios (every expert in RAM, 10 GiB and
# 16 GiB budgets: pp512, tg128, hit rates and time split; pp4096 with every expert in RAM; tg128 with
# 4 and 6 experts copied ahead), and the server under load; logs packed into OUT/logs.tar.gz.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
run profile --gpu-profile -p 0 -n 32 -r 1
grep -E "kernels|gaps|wall|launch" "$out/profile.txt" | head -8
for round in 1 2; do run "vram_tg128_r$round" -p 0 -n 128 -r 3; done
run vram_pp512 -p 512 -n 0 -r 3
run vram_d8192 -p 0 -n 128 -d 8192 -r 2
run ram -p 512 -n 128 -r 2 --expert-slots 0
run ram_pp4096 -p 4096 -b 4096 -n 0 -r 1 --expert-slots 0
run b10 -p 512 -n 128 -r 2 --vram-budget 10GiB
run b16 -p 512 -n 128 -r 2 --vram-budget 16GiB
run ram_pf4 -p 0 -n 128 -r 2 --expert-slots 0 --expert-prefetch 4
run ram_pf6 -p 0 -n 128 -r 2 --expert-slots 0 --expert-prefetch 6
serve_load vram
tar -C "$out" -czf /tmp/logs.tar.gz . && rm -f "$out"/*.txt && mv /tmp/logs.tar.gz "$out/"
