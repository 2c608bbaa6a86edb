#include "plan/allocations.h"

#include <algorithm>

#include "model/blocks/compressed_attention.h"

namespace strata {

namespace {
constexpr uint64_t kF32 = 4;
}  // namespace

namespace {

// deepseek4 (model/blocks/compressed_attention.h): every layer keeps one K = V row per position
// (no value plane) and, on compressed layers, one f32 entry per `ratio` positions (and on CSA
// layers one indexer key per 4); each compressed layer's compressors keep their running state.
ContextMemory deepseek4_context_memory(const ModelConfig& cfg, int64_t n_ctx, KvCacheType type, uint32_t begin,
                                       uint32_t end) {
    ContextMemory m;
    const uint64_t ctx = static_cast<uint64_t>(std::max<int64_t>(n_ctx, 0));
    for (uint32_t il = begin; il < std::min(end, cfg.n_layer); ++il) {
        ++m.attention_layers;
        m.kv_bytes_per_token += static_cast<uint64_t>(kv_row_bytes(type, cfg.head_dim_k));
        const KvCompressorShape entries = dsv4_compressor_shape(cfg, il), keys = dsv4_index_compressor_shape(cfg, il);
        if (entries.ratio > 0) m.kv_bytes += ctx / static_cast<uint64_t>(entries.ratio) * uint64_t(entries.dim) * kF32;
        if (keys.ratio > 0) m.kv_bytes += ctx / static_cast<uint64_t>(keys.ratio) * uint64_t(keys.dim) * kF32;
        m.recurrent_bytes += static_cast<uint64_t>(dsv4_compressor_floats(cfg, il)) * kF32;
    }
    m.kv_bytes += m.kv_bytes_per_token * ctx;
    return m;
}

}  // namespace

ContextMemory context_memory(const ModelConfig& cfg, int64_t n_ctx, KvCacheType type, uint32_t layer_begin,
                             uint32_t layer_end) {
    if (cfg.arch == Arch::Deepseek4) return deepseek4_context_memory(cfg, n_ctx, type, layer_begin, layer_end);
    ContextMemory m;
    for (uint32_t il = layer_begin; il < std::min(layer_end, cfg.n_layer); ++il) {
        if (cfg.is_recurrent_layer(il)) ++m.recurrent_layers;
        else ++m.attention_layers;
    }
    const auto row_bytes = [&](KvCacheType t) {
        return static_cast<uint64_t>(kv_row_bytes(t, cfg.kv_dim_k()) + kv_row_bytes(t, cfg.kv_dim_v()));
    };
    // qwen4exp's QSA layers also keep each token's raw indexer key, in f32 (KvCache::add_index_keys).
    const uint64_t row = row_bytes(type) + uint64_t(cfg.indexer.head_dim) * kF32;
    m.kv_bytes_per_token = uint64_t(m.attention_layers) * row;
    m.kv_bytes = m.kv_bytes_per_token * static_cast<uint64_t>(std::max<int64_t>(n_ctx, 0));
    if (type == KvCacheType::Q8_0 && m.attention_layers > 0) {
        m.kv_staging_bytes = row_bytes(KvCacheType::F16) * static_cast<uint64_t>(std::max<int64_t>(n_ctx, 0));
    }
    if (m.recurrent_layers > 0) {
        // kv/recurrent_state.h: per layer (kernel-1) rows of the conv channels (q, k and v heads:
        // 2·n_group·d_state + d_inner) and one d_k × d_v state per v head (d_state × d_inner in all).
        const uint64_t conv_channels = 2ull * cfg.ssm_n_group * cfg.ssm_d_state + cfg.ssm_d_inner;
        const uint64_t conv = uint64_t(cfg.ssm_conv_kernel > 0 ? cfg.ssm_conv_kernel - 1 : 0) * conv_channels;
        const uint64_t ssm = uint64_t(cfg.ssm_d_state) * cfg.ssm_d_inner;
        m.recurrent_bytes = uint64_t(m.recurrent_layers) * (conv + ssm) * kF32;
    }
    // qwen4exp's PLE block: its dilated convolution's past inputs (over the hc·n_embd streams)
    // and the token ids of its n-gram context (model/blocks/ple_block.h).
    if (cfg.ple.layer >= static_cast<int32_t>(layer_begin) && cfg.ple.layer < static_cast<int64_t>(std::min(layer_end, cfg.n_layer))) {
        const uint64_t past_rows = uint64_t(cfg.ple.conv_kernel - 1) * cfg.ple.ngram_size;
        m.recurrent_bytes += past_rows * cfg.hc_count * cfg.n_embd * kF32 + uint64_t(cfg.ple.ngram_size - 1) * 4;
    }
    return m;
}

namespace {

// f32 values per token that an attention or token-mixing layer keeps live, for the widest kind of
// layer the model has.
uint64_t attention_floats_per_token(const ModelConfig& cfg) {
    const uint64_t heads = cfg.n_head;
    uint64_t widest = 0;
    if (cfg.kv_lora_rank > 0) {
        // MLA (model/blocks/mla_attention_block.h): q, q in latent space (absorbed), latent output,
        // per-head values, the q LoRA input and the cached latent row.
        widest = heads * (cfg.head_dim_k_mla + cfg.kv_dim_k() + cfg.kv_lora_rank + cfg.head_dim_v_mla) +
                 cfg.q_lora_rank + cfg.kv_dim_k();
    } else {
        // q and its output gate (gated attention of qwen3next; generous for the others), k, v and
        // the attention output.
        widest = 2 * heads * cfg.head_dim_k + cfg.kv_dim_k() + cfg.kv_dim_v() + heads * cfg.head_dim_v;
    }
    if (cfg.full_attention_interval > 0) {
        // DeltaNet: mixed qkv and its convolved copy, z, beta and alpha, the core output.
        const uint64_t conv_channels = 2ull * cfg.ssm_n_group * cfg.ssm_d_state + cfg.ssm_d_inner;
        widest = std::max<uint64_t>(widest, 2 * conv_channels + 2 * cfg.ssm_d_inner + 2 * cfg.ssm_dt_rank);
    }
    if (cfg.arch == Arch::Deepseek4) {
        // deepseek4 (model/blocks/compressed_attention.cpp): q and the heads' output, the q LoRA,
        // the K = V row, the compressors' kv and gate (CSA: twice the width) and the indexer's,
        // its queries and head weights, one output group in and out and the low-rank concat;
        // the hc streams, the mHC's normed copy and its mixes.
        const uint64_t hd = cfg.head_dim_k, ih = cfg.indexer.n_head, idim = cfg.indexer.head_dim;
        const uint64_t groups = std::max<uint32_t>(cfg.dsv4.o_groups, 1), lora = cfg.dsv4.o_lora_rank;
        const uint64_t wide = uint64_t(cfg.hc_count) * cfg.n_embd;
        return 2 * heads * hd + cfg.q_lora_rank + hd + 4 * 2 * hd + 4 * 2 * idim + ih * idim + ih +
               heads * hd / groups + lora + groups * lora + 2 * wide + (2ull + cfg.hc_count) * cfg.hc_count;
    }
    if (cfg.hc_count > 0) {
        // qwen4exp: the hc·n_embd streams of the residual, their normed copy and the mixer's gate
        // (model/blocks/hyper_connection.h), and the QSA indexer's queries and key.
        const uint64_t wide = uint64_t(cfg.hc_count) * cfg.n_embd;
        widest += 3 * wide + cfg.hc_lowrank + uint64_t(cfg.indexer.n_head + 1) * cfg.indexer.head_dim;
        if (cfg.ple.layer >= 0) {
            // The PLE block's table rows and its key, query, gated, normed and convolved streams.
            widest = std::max<uint64_t>(widest, 3 * wide + uint64_t(cfg.ple.n_heads()) * cfg.ple.row_width + 5 * wide);
        }
    }
    return widest;
}

// f32 values per token of the FFN: the dense FFN (gate, up and their product) or the MoE layer
// (router logits, per selected expert its gate, up and down outputs, the shared expert's FFN).
uint64_t ffn_floats_per_token(const ModelConfig& cfg, const ModelWeights& w) {
    uint64_t dense = w.has_dense_ffn ? 3ull * cfg.n_ff : 0;
    uint64_t moe = 0;
    if (w.moe_layers > 0) {
        const uint64_t shared_ff =
            cfg.n_ff_shared_expert ? cfg.n_ff_shared_expert : uint64_t(cfg.n_expert_shared) * cfg.n_ff_expert;
        moe = cfg.n_expert + uint64_t(cfg.n_expert_used) * (2ull * cfg.n_ff_expert + cfg.n_embd) + 3 * shared_ff;
    }
    return std::max(dense, moe);
}

// The widest matmul input, quantized (q8_K-like, ≤ 2 bytes per value) before integer dot products.
// feed_forward_length counts only when a dense FFN exists (qwen3moe writes it but has none).
uint64_t widest_matmul_input(const ModelConfig& cfg, const ModelWeights& w) {
    return std::max<uint64_t>({cfg.n_embd, w.has_dense_ffn ? cfg.n_ff : 0u, w.moe_layers ? cfg.n_ff_expert : 0u,
                               cfg.q_dim(), uint64_t(cfg.n_head) * cfg.head_dim_v, cfg.ssm_d_inner,
                               cfg.n_ff_shared_expert});
}

}  // namespace

uint64_t staging_slots_per_half(const ModelConfig& cfg) {
    return std::max<uint64_t>(cfg.n_expert_used, std::min<uint64_t>(kMaxStagingHalf, cfg.n_expert / 4));
}

Workspace device_workspace(const ModelConfig& cfg, const ModelWeights& w, int64_t n_batch, bool stage_experts) {
    const uint64_t b = static_cast<uint64_t>(std::max<int64_t>(n_batch, 1));
    Workspace ws;
    ws.activations = b * (3ull * cfg.n_embd * kF32 + 2 * widest_matmul_input(cfg, w));
    ws.attention = b * attention_floats_per_token(cfg) * kF32 + b * cfg.n_head * kAttentionScoreTile * kF32;
    if (cfg.full_attention_interval > 0) {
        // The causal convolution's input window: kernel-1 past rows ahead of the batch's rows.
        const uint64_t conv_channels = 2ull * cfg.ssm_n_group * cfg.ssm_d_state + cfg.ssm_d_inner;
        ws.attention += (b + cfg.ssm_conv_kernel) * conv_channels * kF32;
    }
    // MoE sort buffers (pair ids, tiles, expert ids and weights): 4 int32/f32 per pair.
    const uint64_t moe_sort = w.moe_layers ? b * cfg.n_expert_used * 4 * 4 : 0;
    ws.ffn = b * ffn_floats_per_token(cfg, w) * kF32 + moe_sort;
    ws.logits = b * cfg.n_vocab * kF32 + gpu_sampling_bytes(cfg.n_vocab);
    if (stage_experts && w.moe_layers > 0) ws.expert_staging = 2ull * staging_slots_per_half(cfg) * w.expert_slot_bytes;
    return ws;
}

uint64_t gpu_sampling_bytes(uint64_t n_vocab) { return 32 + n_vocab * (8 + 8 + kF32); }

uint64_t host_workspace(const ModelConfig& cfg, const ModelWeights& w, int64_t n_batch, bool has_gpu) {
    const uint64_t b = static_cast<uint64_t>(std::max<int64_t>(n_batch, 1));
    // The sampler sorts (id, probability) candidates over the whole vocabulary; the last logits
    // row is copied to the host.
    const uint64_t sampler = uint64_t(cfg.n_vocab) * (kF32 + 8);
    if (!has_gpu) return device_workspace(cfg, w, n_batch, false).total() - gpu_sampling_bytes(cfg.n_vocab) + sampler;
    // Beside a GPU: the layer input copied down (f32 and quantized) and, per selected expert, the
    // gate/up/down outputs the CPU workers compute for misses (every pair may miss).
    uint64_t expert_workers = 0;
    if (w.moe_layers > 0) {
        expert_workers = b * (cfg.n_embd * (kF32 + 2) +
                              uint64_t(cfg.n_expert_used) * (2ull * cfg.n_ff_expert + cfg.n_embd) * kF32);
    }
    // The embedding rows looked up on the host and copied up (the table stays in RAM).
    const uint64_t embedding_rows = b * cfg.n_embd * kF32;
    return expert_workers + embedding_rows + sampler;
}

}  // namespace strata
