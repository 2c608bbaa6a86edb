#pragma once
// The GPU ops of DeepSeek-V2/V3 (model/gpu/gpu_deepseek2.cpp) beyond gpu_ops.h and the latent
// attention of gpu_ops_mla.h: the grouped expert routing, the per-head products of the absorbed
// attention (k_b, v_b), and the two row passes around the cache store. Conventions as gpu_ops.h:
// device pointers, queued on the context's stream without a host wait; positions are read on the
// device, so a one-token step can be captured in a graph. CPU references: route_grouped
// (model/blocks/moe_routing.h) and mla_attention_block (model/blocks/mla_attention_block.cpp);
// parity tests in tests/gpu/op_parity_deepseek_test.cpp.
//
//   gpu_moe_route_grouped(logits, n, GpuGroupedRouting{...}, ids, weights, ctx);   // then gpu_moe_plan
//   MoePlan heads = gpu_head_plan(n, n_head, kGpuMatmulColumns, slot, ctx);
//   gpu_matmul_heads(k_b, heads, q, dk, q_abs, lora + rope, slot + 3, ctx);  // q_nope → latent
//   gpu_mla_q_rope_absorb(q, n, n_head, dk, lora, rope, positions, q_abs, ctx);
//   gpu_mla_kv_norm_rope_store(kv_a_rows, n, lora, kv_a_norm, eps, rope, positions, cache, layer, ctx);

#include <cstdint>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_ops.h"

namespace strata::gpu {

// ---- grouped expert routing --------------------------------------------------------------------
// route_grouped's parameters; selection_bias is a device array (or null).
struct GpuGroupedRouting {
    int64_t n_expert = 0;
    int64_t k = 0;                         // experts per token
    int64_t n_group = 1;                   // experts split into this many equal groups ...
    int64_t n_group_used = 1;              // ... and only the best n_group_used are eligible
    bool sigmoid = true;                   // scores: sigmoid(logit), else softmax over all logits
    const float* selection_bias = nullptr; // [n_expert] added to the scores for choosing only
    bool normalize = true;                 // chosen weights divided by their sum (+1e-20)
    float scale = 1.0f;                    // then multiplied by this (routed_scaling_factor)
};
// The most groups the kernel tracks (DeepSeek-V3: 8).
constexpr int64_t kGpuMaxExpertGroups = 64;
// Per token, as route_grouped: scores; choice = score + bias; with 1 < n_group_used < n_group, a
// group's merit is the sum of its two best choices and only the n_group_used best groups (ties to
// the lower index) are eligible; the k best eligible choices (ties to the lower index), best
// first, with weights = their unbiased scores, normalized and scaled. ids/weights: n_tokens rows
// of k, as gpu_moe_route_softmax_topk writes them, for gpu_moe_plan and the expert tiers.
void gpu_moe_route_grouped(const float* logits, int64_t n_tokens, const GpuGroupedRouting& p, int32_t* ids,
                           float* weights, GpuContext& ctx);

// ---- per-head products --------------------------------------------------------------------------
// The plan of a product with one matrix per attention head: pair p = t·n_head + h (row h of
// token t) uses matrix h, pairs grouped by head and cut into tiles of up to tile_columns tokens
// (kGpuMatmulColumns, or kGpuTiledColumns for prompt batches whose weights allow it:
// gpu_moe_tile_columns(n_tokens · n_head, n_head, w1, w2)). Written on the device, from scratch
// slots [slot, slot + 2]; one plan serves every per-head product of a step.
MoePlan gpu_head_plan(int64_t n_tokens, int64_t n_head, int tile_columns, int scratch_slot, GpuContext& ctx);
// y row p (at y + p·y_stride, w.ne[1] values) = W_{head of p} · x row p (at x + p·x_stride, the
// first w.ne[0] values) for every pair of the plan; w: [n_in, n_out, n_head] (k_b, v_b). Rows
// that are not packed go through scratch slots scratch_slot (inputs) and scratch_slot + 1
// (outputs); the rest of each y row is left as it is.
void gpu_matmul_heads(const DeviceWeight& w, const MoePlan& plan, const float* x, int64_t x_stride, float* y,
                      int64_t y_stride, int scratch_slot, GpuContext& ctx);

// dst row r (dst + r·dst_stride) = the first `width` values of src row r (src + r·src_stride).
void gpu_copy_rows(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t n_rows, int64_t width,
                   GpuContext& ctx);

// ---- the rows around the latent cache -----------------------------------------------------------
// The roped tail of each query head into the absorbed query: for token t and head h, the last
// rope.rope_dims values of q's head (rows of n_head·head_dim, the tail at head_dim − rope_dims)
// are roped at positions[t] and written after the latent part of q_abs's head (rows of
// n_head·(kv_lora_rank + rope_dims), at offset kv_lora_rank). q is not changed. Of `rope`, the
// style, dims, base or table and factor are used; head_dim is the argument's.
void gpu_mla_q_rope_absorb(const float* q, int64_t n_tokens, int64_t n_head, int64_t head_dim, int64_t kv_lora_rank,
                           const GpuRope& rope, const int32_t* positions, float* q_abs, GpuContext& ctx);

// One sequence's kv_a rows ([latent (kv_lora_rank) | rope key (rope.rope_dims)], packed) in place:
// the latent RMS-normed with `norm`, the key roped at positions[t]; then each row stored in the
// cache at row positions[t]: keys the whole row (kv.k_dim() = kv_lora_rank + rope dims), values
// the latent (kv.v_dim() = kv_lora_rank).
void gpu_mla_kv_norm_rope_store(float* kv_a, int64_t n_tokens, int64_t kv_lora_rank, const float* norm, float eps,
                                const GpuRope& rope, const int32_t* positions, GpuKvCache& kv, int64_t layer,
                                GpuContext& ctx);

}  // namespace strata::gpu
