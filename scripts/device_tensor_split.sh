#!/usr/bin/env bash
# A model split by tensor over two GPUs (--split tensor), on a two-GPU machine: the GPU tests of
# the splits (tensor split against one GPU and HF transformers, with NCCL and with copies; layer
# split bit for bit), `strata parity --gpus 0,1 --split tensor` of the fixtures, then the
# BENCHMARKS.md synthetic Qwen3-30B-A3B all in VRAM: one GPU, layer split, tensor split with NCCL
# and with the copies all-reduce, and a per-op profile of the tensor split's decode.
# Usage: scripts/device_tensor_split.sh OUT_DIR BIN_DIR TESTDATA [LAYERS (48)] [PHASE (1|2|3|4|all)]
# Phase 1: tests, parity, synth, one GPU and tensor split (NCCL); phase 2: layer split, copies,
# profile, plans; phase 3: uneven budgets, and both splits as on a pair without peer access
# (STRATA_GPU_PEER=0, NCCL_P2P_DISABLE=1); phase 4: the split tests again, decode of both splits,
# and `strata serve` driven by `strata loadgen` on each split. The model is kept between phases. NCCL comes from the machine: STRATA_NCCL_LIBRARY, or the first
# libnccl.so.2 found under /usr and /opt.
set -uo pipefail
export NCCL_NVLS_ENABLE=0  # never NVLink multicast
source "$(dirname "$0")/device_common.sh" "$@"
phase=${extra[0]:-all}
if [[ -z "${STRATA_NCCL_LIBRARY:-}" ]]; then
  STRATA_NCCL_LIBRARY=$(find /usr /opt -name 'libnccl.so.2' 2> /dev/null | head -1)
  export STRATA_NCCL_LIBRARY
fi
echo "NCCL: ${STRATA_NCCL_LIBRARY:-none found}" | tee -a "$out/machine.txt"
gpus=0,1
[[ $(env -u LD_LIBRARY_PATH nvidia-smi -L | wc -l) -ge 2 ]] || gpus=0,0
model=/tmp/strata-synth-${layers}l.gguf
bench_device=()  # each run names its GPUs
run_bench=(-p 512,4096 -b 4096 -n 128 -r 2)

if [[ $phase == 1 || $phase == all ]]; then
  env -u LD_LIBRARY_PATH nvidia-smi topo -m >> "$out/machine.txt" 2>&1
  step gpu_tests 300 "$bin/strata_gpu_tests" --gtest_filter='*TensorSplit*:*LayerSplit*:*Moe*:*MoE*:*Quantized*'
  grep -E "FAILED|PASSED|Failure|SKIPPED|gpu-tensor|tensor split all-reduce" "$out/gpu_tests.txt" | head -40
  for m in llama qwen3 qwen3moe mixtral gptoss; do
    step "parity_tensor_$m" 120 "$bin/strata" parity --gpus "$gpus" --split tensor -m "$data/models/$m.gguf" \
      --ref "$data/models/$m.ref.gguf"
    grep -E "PASS|FAIL|nmse|split|error" "$out/parity_tensor_$m.txt" | head -6
  done
  [[ -f $model ]] || synth_model
  bench one --device 0 "${run_bench[@]}"
  bench tensor_nccl --gpus "$gpus" --split tensor "${run_bench[@]}"
fi
if [[ $phase == 2 || $phase == all ]]; then
  [[ -f $model ]] || synth_model
  bench layer --gpus "$gpus" "${run_bench[@]}"
  STRATA_GPU_COLLECTIVE=copies bench tensor_copies --gpus "$gpus" --split tensor "${run_bench[@]}"
  step profile_tensor 120 "$bin/strata" bench -m "$model" --gpus "$gpus" --split tensor -p 0 -n 16 -r 1 --gpu-profile
  head -40 "$out/profile_tensor.txt"
  step plan_tensor 60 "$bin/strata" plan -m "$model" --vram 80GiB,80GiB --split tensor
  head -30 "$out/plan_tensor.txt"
  step plan_tensor_small 60 "$bin/strata" plan -m "$model" --vram 10GiB,10GiB --split tensor
  grep -iE "fit|problem|keeps" "$out/plan_tensor_small.txt" | head -5
  # NCCL's collectives launched eagerly instead of captured in the decode graph.
  STRATA_NCCL_GRAPHS=0 bench tensor_nccl_eager --gpus "$gpus" --split tensor -p 0 -n 128 -r 2
fi
if [[ $phase == 3 || $phase == all ]]; then
  [[ -f $model ]] || synth_model
  bench uneven_14_6 --gpus "$gpus" --vram-budget 14GiB,6GiB -p 512 -n 128 -r 2
  bench uneven_16_8 --gpus "$gpus" --vram-budget 16GiB,8GiB -p 512 -n 128 -r 2
  bench one_20g --device 0 --vram-budget 20GiB -p 512 -n 128 -r 2
  bench tensor_12_12 --gpus "$gpus" --split tensor --vram-budget 12GiB -p 512 -n 128 -r 2
  export STRATA_GPU_PEER=0 NCCL_P2P_DISABLE=1
  step gpu_tests_no_peer 300 "$bin/strata_gpu_tests" --gtest_filter='*TensorSplit*:*LayerSplit*'
  grep -E "FAILED|PASSED|Failure|tensor split all-reduce|peer" "$out/gpu_tests_no_peer.txt" | head -12
  bench layer_no_peer --gpus "$gpus" -p 512 -n 128 -r 2
  bench tensor_no_peer --gpus "$gpus" --split tensor -p 512 -n 128 -r 2
  STRATA_GPU_COLLECTIVE=copies bench tensor_copies_no_peer --gpus "$gpus" --split tensor -p 512 -n 128 -r 2
fi
if [[ $phase == 4 || $phase == all ]]; then
  step gpu_tests_4 300 "$bin/strata_gpu_tests" --gtest_filter='*TensorSplit*:*LayerSplit*:*Moe*:*MoE*:*Fused*'
  grep -E "FAILED|PASSED|Failure" "$out/gpu_tests_4.txt" | head -12
  [[ -f $model ]] || synth_model
  bench one_4 --device 0 -p 512 -n 128 -r 2
  bench tensor_4 --gpus "$gpus" --split tensor -p 512 -n 128 -r 2
  serve_load layer --gpus "$gpus"
  serve_load tensor --gpus "$gpus" --split tensor
fi

