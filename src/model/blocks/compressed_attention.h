#pragma once
// DeepSeek-V4's attention (HF DeepseekV4Attention; NEW_ARCHS.md §B1.3-B1.4), one block for the
// three layer kinds. Per token at position p (x: the normalized block input):
//   c = norm(W_qa·x)                q = RoPE(rms(W_qb·c) per head)         (no weight on the head norm)
//   kv = RoPE(norm(W_kv·x))         one head, used as key and value (MQA, K = V)
// RoPE turns interleaved pairs of each head's last rope_dims values: θ = rope_theta on sliding
// layers, compress_rope_theta with YaRN (attention factor 1) on compressed ones. The query sees
//   the raw kv of the last sliding_window positions (p included)
//   ∪ compressed entries (kv_compressor.h): on HCA layers (ratio 128) all complete ones, on CSA
//     layers (ratio 4) the lightning indexer's top k of them (lightning_indexer.h)
// softmax(q·K/sqrt(head_dim), with a per-head sink logit that takes weight and gives nothing),
// then the output's rope values are turned back by −θ(p), and the heads, in o_groups groups,
// each go through their W_oa slice before W_ob mixes the groups.
//
// Where each sequence keeps what: its KvCache holds the raw kv rows of every position (key
// plane; no value plane) and the compressed entries and indexer keys (entry planes
// kDsv4EntryPlane, kDsv4IndexPlane); its RecurrentState holds each compressed layer's compressor
// state (and its indexer's) as the layer's history (dsv4_compressor_floats).

#include <cstdint>

#include "backend/cpu/cpu_context.h"
#include "backend/cpu/rope_table.h"
#include "kv/kv_cache.h"
#include "kv/recurrent_state.h"
#include "model/blocks/blocks.h"
#include "model/blocks/kv_compressor.h"
#include "model/config.h"

namespace strata {

struct CompressedAttentionWeights {
    Weight wq_a;       // attn_q_a [n_embd, q_lora_rank]
    Weight q_a_norm;   // attn_q_a_norm [q_lora_rank] F32
    Weight wq_b;       // attn_q_b [q_lora_rank, n_head·head_dim]
    Weight wkv;        // attn_kv [n_embd, head_dim]
    Weight kv_norm;    // attn_kv_a_norm [head_dim] F32
    Weight wo_a;       // attn_output_a viewed as [n_head·head_dim / o_groups, o_lora_rank, o_groups]
    Weight wo_b;       // attn_output_b [o_groups·o_lora_rank, n_embd]
    Weight sinks;      // attn_sinks [n_head] F32
    KvCompressorWeights compressor;        // ratio > 0
    KvCompressorWeights index_compressor;  // ratio 4: the indexer's keys
    Weight index_wq_b;                     // indexer.attn_q_b [q_lora_rank, index_heads·index_dim]
    Weight index_proj;                     // indexer.proj [n_embd, index_heads]
};

struct CompressedAttentionRopes {
    RopeTable main;      // sliding-only layers
    RopeTable compress;  // compressed layers, their compressors and indexer
};
CompressedAttentionRopes compressed_attention_ropes(const ModelConfig& cfg);

inline constexpr int kDsv4EntryPlane = 0;  // compressed entries, head_dim wide
inline constexpr int kDsv4IndexPlane = 1;  // the indexer's compressed keys, index_dim wide

// The compressors' shapes of layer il (ratio 0: none).
KvCompressorShape dsv4_compressor_shape(const ModelConfig& cfg, uint32_t il);
KvCompressorShape dsv4_index_compressor_shape(const ModelConfig& cfg, uint32_t il);
// Floats of the running state of layer il's compressors (the history of its RecurrentState).
int64_t dsv4_compressor_floats(const ModelConfig& cfg, uint32_t il);
// A sequence's cache and state for a deepseek4 config.
KvCache make_dsv4_kv_cache(const ModelConfig& cfg, int64_t n_ctx, KvCacheType type);
RecurrentState make_dsv4_state(const ModelConfig& cfg);

// out = the attention's output (n_tokens rows of n_embd) for the normalized input x; each
// sequence's raw kv, entries and compressor state advance by its tokens.
void compressed_attention(const CompressedAttentionWeights& w, const ModelConfig& cfg,
                          const CompressedAttentionRopes& ropes, const float* x, const Batch& batch, uint32_t il,
                          float* out, CpuContext& ctx);

}  // namespace strata
