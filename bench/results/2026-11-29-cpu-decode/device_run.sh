#!/usr/bin/env bash
# CPU decode vs the memory-bandwidth bound on the device machine (bench/results/2026-11-29-cpu-decode).
set -uo pipefail
out=${OUT:?}
mkdir -p /tmp/cd /tmp/gpu
tar xJf device-data/cpu-decode.tar.xz -C /tmp/cd
tar xJf device-data/bundle.tar.xz -C /tmp/gpu
(lscpu; free -g; nproc; cat /sys/kernel/mm/transparent_hugepage/enabled) > "$out/machine.txt" 2>&1
(env -u LD_LIBRARY_PATH nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true) >> "$out/machine.txt" 2>&1
export LD_LIBRARY_PATH=/tmp/cd/lib
t=$(date +%s)
timeout 150 /tmp/cd/bin/strata synth --preset qwen3-30b-a3b --layers 8 -o /tmp/s8.gguf --vocab /tmp/cd/vocab.gguf > "$out/synth.log" 2>&1
echo "synth: exit $?, $(( $(date +%s) - t )) s" | tee "$out/times.txt"
bench() {  # name binary args...
  local name=$1 bin=$2; shift 2
  t=$(date +%s)
  timeout 90 "$bin" bench -m /tmp/s8.gguf -p 0 -n 64 -r 3 --device cpu "$@" > "$out/$name.txt" 2>&1
  echo "$name: exit $?, $(( $(date +%s) - t )) s: $(grep -E 'tg64|tokens_per_second' "$out/$name.txt" | head -1)" | tee -a "$out/times.txt"
}
for round in 1 2; do
  for th in 16 8; do
    bench "cpu_t${th}_r${round}" /tmp/cd/bin/strata -t $th
    bench "cpu_t${th}_spin200_r${round}" /tmp/cd/bin/strata -t $th --spin-us 200
    bench "base_t${th}_r${round}" /tmp/cd/bin/strata-base -t $th --spin-us 0
  done
done
bench cpu_t16_json /tmp/cd/bin/strata -t 16 --json
t=$(date +%s)
LD_LIBRARY_PATH=/tmp/gpu/lib timeout 90 /tmp/gpu/bin/strata bench -m /tmp/s8.gguf -p 0 -n 64 -r 3 --device gpu > "$out/gpu.txt" 2>&1
echo "gpu: exit $?, $(( $(date +%s) - t )) s" | tee -a "$out/times.txt"; cat "$out/gpu.txt"
