#pragma once
// Multi-head latent attention on the GPU (DeepSeek-V2/V3), in the absorbed form of
// model/blocks/mla_attention_block.h: the cache keeps one row per position — keys [the
// normalized kv latent (kv_lora_rank) | the shared roped key (rope_dims)], values the latent
// alone — and every query head attends to that single row (one KV head for all query heads).
// The queries arrive absorbed (each head's no-rope part already mapped into latent space by its
// k_b matrix) and roped; each head's output is a latent, mapped to the head's value by v_b after.
// CPU reference: cpu_attention with AttentionParams{n_head, 1, kv_lora_rank + rope_dims,
// kv_lora_rank, scale}; parity tests in tests/gpu/op_parity_mla_test.cpp.
//
//   GpuKvCache kv(pool, n_layer, n_ctx, lora + rope, lora, KvCacheType::F16, &error);
//   gpu_kv_store(kva_rows, kva_rows_latent, n, pos0, kv, layer, ctx);   // k rows of lora + rope, v rows of lora
//   gpu_attention_mla(q_absorbed, kv, layer, n, positions, {n_head, lora, rope, scale}, out, ctx);

#include <cstdint>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_ops.h"

namespace strata::gpu {

struct GpuMlaParams {
    int64_t n_head = 0;        // query heads (DeepSeek-V3: 128)
    int64_t kv_lora_rank = 0;  // latent width: the value width and the first part of a key (512)
    int64_t rope_dims = 0;     // the roped tail of a key (64)
    float scale = 1.0f;        // softmax scale (1/sqrt(nope + rope dims), times YaRN's mscale²)
};
// The widest latent and rope tail the kernels take.
constexpr int64_t kGpuMaxMlaLatent = 512;
constexpr int64_t kGpuMaxMlaRope = 64;
// The GpuContext scratch slot the split decode keeps its partials in (next to
// kGpuAttentionScratchSlot; callers' own slots stay below 48).
constexpr int kGpuMlaScratchSlot = 49;

// q: n_tokens rows of n_head × (kv_lora_rank + rope_dims); the cache (kv.k_dim() = kv_lora_rank +
// rope_dims, kv.v_dim() = kv_lora_rank) holds positions 0 .. positions[t] for token t, which sees
// exactly those (causal); out: n_tokens rows of n_head × kv_lora_rank. Positions are read on the
// device and the launch shape depends only on n_tokens and the cache capacity, so a one-token
// step can be captured in a graph and replayed at any depth.
//
// Takes kv_lora_rank a multiple of 8 in [8, 512], rope_dims a multiple of 8 in [0, 64], any
// n_head ≥ 1, f32 or f16 caches; q, out and the cache rows 16-byte aligned (a pointer to any row
// of an aligned buffer is: rows are multiples of 8 floats). Values are read from kv.values(layer),
// not from the keys' latent part, although the model stores the same latent in both.
// Implementation (ops_attention_mla.cu, kernels/attention_mla.cuh): blocks of 32 (token, head)
// rows stage each key and value tile in shared memory once for all their rows, with an online
// softmax; when the row tiles alone do not fill the GPU (decode), the keys are also split across
// blocks and a merge kernel combines the slices' partial softmaxes. Those partials live in
// GpuContext scratch slot kGpuMlaScratchSlot (49; one size per device, 2 × SMs × 32 rows of
// 2 + 512 floats: ~17 MiB on an H200, allocated by the first call that splits, never moved
// after), so callers' own slots stay below kGpuAttentionScratchSlot (48, gpu_attention's split
// partials) and both kinds of attention can run in one captured step.
void gpu_attention_mla(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, const int32_t* positions,
                       const GpuMlaParams& p, float* out, GpuContext& ctx);

}  // namespace strata::gpu
