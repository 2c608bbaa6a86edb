#pragma once
// Multi-head latent attention (DeepSeek-V2/V3), in the absorbed form llama.cpp's newer GGUFs are
// laid out for: the cache keeps one row per token — the normalized kv latent (kv_lora_rank) and
// the shared roped key (rope dims) — and every head attends to that single row. Each head's
// no-rope query is first mapped into latent space by its k_b matrix, and the attention output
// (a latent) is mapped back to the head's value by its v_b matrix. This is HF's
// softmax(q·k) v with the kv_b product reassociated, so it is exact up to float rounding.
//
//   MlaAttentionWeights w = ...;                       // from blk.N.attn_*
//   mla_attention_block(w, cfg, rope, kq_scale, x, batch, layer, ctx);

#include <cstdint>

#include "backend/cpu/rope_table.h"
#include "model/blocks/blocks.h"

namespace strata {

// Shapes in GGUF order [in, out]; dk = head_dim_k_mla = nope + rope, r = rope dims.
struct MlaAttentionWeights {
    Weight norm;          // [n_embd]
    Weight q_a;           // [n_embd, q_lora_rank]           (absent: wq)
    Weight q_a_norm;      // [q_lora_rank]
    Weight q_b;           // [q_lora_rank, n_head * dk]
    Weight wq;            // [n_embd, n_head * dk]            (models without q LoRA)
    Weight kv_a;          // [n_embd, kv_lora_rank + r]      latent, then the shared rope key
    Weight kv_a_norm;     // [kv_lora_rank]
    Weight k_b;           // [nope, kv_lora_rank, n_head]    q_nope → latent, per head
    Weight v_b;           // [kv_lora_rank, head_dim_v_mla, n_head]  latent → value, per head
    Weight wo;            // [n_head * head_dim_v_mla, n_embd]
};

// kq_scale: HF's softmax scale, 1/sqrt(dk) times YaRN's mscale² when the model uses it.
void mla_attention_block(const MlaAttentionWeights& w, const ModelConfig& cfg, const RopeTable& rope, float kq_scale,
                         float* x, const Batch& batch, int64_t layer, CpuContext& ctx);

}  // namespace strata
