#!/usr/bin/env bash
# Issue 9, every expert in RAM, decode: where the GPU's time goes between two CPU lanes.
source "$(dirname "$0")/device_common.sh" "$@"
model=MODEL
synth_model
cat "$model" > /dev/null
gpu() {  # name env... -- args...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  step "$name" 300 env "${envs[@]}" "$bin/strata" bench -m "$model" --device gpu -p 0 "$@"
  echo "$name: $(grep -E '^\|.*(tg|pp)[0-9]|experts:|between' "$out/$name.txt" | tr -s ' ' | head -6 | tr '\n' ' ')"
}
gpu prof X=1 -- -n 64 -r 1 --expert-slots 0 --gpu-profile
sed -n '/op/,$p' "$out/prof.txt" | head -60
NSYS=$(ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
[[ -z "$NSYS" ]] && NSYS=$(find / -xdev -name nsys -type f 2>/dev/null | head -1)
echo "nsys: $NSYS"
if [[ -n "$NSYS" ]]; then
  CUDA_VISIBLE_DEVICES=0 step nsys 300 "$NSYS" profile -t cuda --sample=none --cpuctxsw=none -o /tmp/tl -f true \
    "$bin/strata" bench -m "$model" --device gpu -p 0 -n 24 -r 1 --expert-slots 0
  step nsys_gpu 300 "$NSYS" stats -r cuda_gpu_trace -f csv -o /tmp/tl_gpu /tmp/tl.nsys-rep
  step nsys_api 300 "$NSYS" stats -r cuda_api_trace -f csv -o /tmp/tl_api /tmp/tl.nsys-rep
  ls -la /tmp/tl*
  gzip -c /tmp/tl_gpu*.csv > "$out/gpu_trace.csv.gz"; gzip -c /tmp/tl_api*.csv > "$out/api_trace.csv.gz"
fi
for r in 1 2; do
  gpu x0_r$r X=1 -- -n 64 -r 2 --expert-slots 0
  gpu x2_r$r STRATA_GPU_EXTRA_LAUNCHES=2 -- -n 64 -r 2 --expert-slots 0
done
gpu b2g X=1 -- -n 128 -r 2 --vram-budget 2GiB
gpu b3g X=1 -- -n 128 -r 2 --vram-budget 3GiB
