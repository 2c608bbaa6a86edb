#!/usr/bin/env bash
# Issue 9: where an all-in-RAM decode step's time goes, as a timeline (nsys) of 16 decode tokens.
set -uo pipefail
source "$(dirname "$0")/device_common.sh" "$@"
which nsys ncu > "$out/tools.txt" 2>&1; ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys >> "$out/tools.txt" 2>&1
model=synth-qwen3-30b-a3b.gguf
synth_model
bench ram_all -p 0 -n 64 -r 3 --expert-slots 0
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
if [[ -n "$NSYS" ]]; then
  step nsys 240 "$NSYS" profile -t cuda,osrt --sample=none --cpuctxsw=none -o /tmp/tl -f true \
    "$bin/strata" bench -m "$model" --device gpu -p 0 -n 16 -r 1 --expert-slots 0
  step nsys_stats 240 "$NSYS" stats --report cuda_api_trace,cuda_gpu_trace --format csv -o "$out/tl" /tmp/tl.nsys-rep
  ls -la "$out" >> "$out/times.txt"
  xz -T4 "$out"/tl*.csv
fi
