#pragma once
// Prompt-batch attention on f16 tensor cores (ops_attention_flash_mma.cu): the flash path
// (kernels/attention_paths.cuh) takes it for an f16 KV cache on CUDA sm_80 and later, where the
// shape fits, and its f32 FMA tiles otherwise. Q and the softmax weights are rounded to f16 for
// the products (sums stay f32), so results differ from the CPU reference by ~1e-7 NMSE instead
// of float summation order (measured 3e-8 .. 8e-8); tests pick limits by gpu_attention_flash_mma.
//
//   if (gpu_attention_flash_mma(ctx)) limit = 1e-5;   // prompt batches over an f16 cache
//   if (!launch_attention_flash_mma(call, ctx)) launch the FMA tiles;

#include "backend/gpu/device_runtime.h"

namespace strata::gpu {

struct AttentionCall;  // kernels/attention_paths.cuh

// Whether this device and build run prompt-batch attention over f16 caches on tensor cores:
// CUDA sm_80+, and STRATA_GPU_FLASH_MMA is not 0 (A/B switch). Head dims up to 128 whose key and
// value widths are multiples of 8, and groups of up to 64 query heads per KV head, then take it.
bool gpu_attention_flash_mma(const GpuContext& ctx);

// False (nothing launched) when the tensor-core kernel does not take this call.
bool launch_attention_flash_mma(const AttentionCall& call, GpuContext& ctx);

// Decode steps (the split path, ops_attention_split.cu) on the same tensor-core kernel, the keys cut
// into n_split slices whose partials the split path's merge combines: where the device runs the
// flash path on tensor cores, unless STRATA_GPU_DECODE_MMA=0 (A/B against the FMA decode kernel).
// The decode output then carries the same f16 rounding of queries and weights as prompt batches.
// H200, synthetic Qwen3-30B-A3B, tg128 at depth 8192: 299.8 / 298.9 tok/s against 284.2 / 283.8;
// at depth 0: 357.9 / 358.3 against 359.9 / 360.5 (bench/results/2026-11-30-decode-attention-mma).
bool gpu_attention_decode_mma(const GpuContext& ctx);
// False (nothing launched) when the tensor-core kernel does not take this call; else the partials
// of slices 0 .. n_split - 1 (part_ml: max and sum per (token, head, slice); part_acc: head_dim_v
// floats each).
bool launch_attention_mma_split(const AttentionCall& call, int n_split, float* part_ml, float* part_acc,
                                GpuContext& ctx);

}  // namespace strata::gpu
