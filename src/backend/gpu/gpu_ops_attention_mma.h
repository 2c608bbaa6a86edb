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

}  // namespace strata::gpu
