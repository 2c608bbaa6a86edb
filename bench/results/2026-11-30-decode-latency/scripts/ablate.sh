#!/usr/bin/env bash
# Issue 5: what each decode op costs inside the replayed graph (STRATA_GPU_ABLATE mutes one op's
# kernels; STRATA_GPU_EXTRA_LAUNCHES adds empty chained launches after every op), everything in
# VRAM; then, on the same uniform model, the tiers' decode at 10 GiB and with every expert in RAM.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
model=/tmp/strata-synth-48l.gguf
synth_model
run() {  # name args...
  local name=$1; shift
  step "$name" 300 "$bin/strata" bench -m "$model" --device gpu "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]' "$out/$name.txt" | tr -s ' ' | head -1) $(grep -E 'experts:' "$out/$name.txt" | tail -1 | sed 's/.*experts://')"
}
ops=("matmul attn_qkv" "qk_norm_rope_store" "attention" "matmul attn_output" "add_rms_norm ffn_norm"
     "moe_router_route_plan_single" "matmul_experts gate_up_swiglu" "quantize_q8" "matmul_experts down"
     "moe_combine_rms_norm next" "matmul output")
run base_r1 -p 0 -n 128 -r 3
step profile 120 "$bin/strata" bench -m "$model" --device gpu -p 0 -n 32 -r 1 --gpu-profile
for i in "${!ops[@]}"; do
  STRATA_GPU_ABLATE="${ops[$i]}" run "ablate_$i" -p 0 -n 128 -r 3
  echo "  (ablated: ${ops[$i]})"
done
for n in 1 2; do STRATA_GPU_EXTRA_LAUNCHES=$n run "extra_$n" -p 0 -n 128 -r 3; done
STRATA_GPU_PDL=0 run nopdl -p 0 -n 128 -r 3
run base_r2 -p 0 -n 128 -r 3
run base_d8192 -p 0 -n 128 -d 8192 -r 2
STRATA_GPU_ABLATE=attention run ablate_attention_d8192 -p 0 -n 128 -d 8192 -r 2
for round in 1 2; do
  run "b10_r$round" -p 0 -n 64 -r 3 --vram-budget 10GiB
  run "ram_r$round" -p 0 -n 64 -r 3 --expert-slots 0
done
