// Gated full attention (Qwen3-Next, Qwen3.5), after HF transformers' Qwen3NextAttention: the q
// projection carries, per head, the query and an output gate; q and k get per-head RMS norms
// and a partial NEOX rope (the first rope_dims of each head); the attention output is scaled by
// sigmoid(gate) before the output projection.
//
// Qwen3.5's interleaved M-RoPE sections (rope.dimension_sections) give each rotated pair the
// temporal, height or width position; for text all three are the token's position, so it is
// the plain rope applied here. qwen4exp's QSA layers are this attention with an indexer choosing
// the keys each query reads (model/blocks/qsa_indexer.h).
#include <algorithm>
#include <cmath>

#include "backend/cpu/attention.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "model/blocks/gated_delta_net_block.h"

namespace strata {

void gated_attention_block(const GatedAttentionWeights& w, const ModelConfig& cfg, float* x, const Batch& batch,
                           int64_t layer, CpuContext& ctx) {
    hybrid_residual_block(w.norm, cfg, x, batch.n_tokens, ctx,
                          [&](const float* h, float* out) { gated_attention(w, cfg, h, batch, layer, ctx, out); });
}

void gated_attention(const GatedAttentionWeights& w, const ModelConfig& cfg, const float* h, const Batch& batch,
                     int64_t layer, CpuContext& ctx, float* out) {
    using namespace hybrid_slots;
    const int64_t n = batch.n_tokens, hd = cfg.head_dim_k;
    const int64_t n_head = cfg.n_head, q_dim = cfg.q_dim(), k_dim = cfg.kv_dim_k(), v_dim = cfg.kv_dim_v();

    float* qg = ctx.scratch_floats(kMixed, static_cast<size_t>(n * 2 * q_dim));
    float* k = ctx.scratch_floats(kK, static_cast<size_t>(n * k_dim));
    float* v = ctx.scratch_floats(kV, static_cast<size_t>(n * v_dim));
    cpu_matmul(w.wq, 0, h, n, qg, ctx);
    cpu_matmul(w.wk, 0, h, n, k, ctx);
    cpu_matmul(w.wv, 0, h, n, v, ctx);

    // De-interleave [q_0 gate_0 q_1 gate_1 ...] into q rows and gate rows.
    float* q = ctx.scratch_floats(kQ, static_cast<size_t>(n * q_dim));
    float* gate = ctx.scratch_floats(kGates, static_cast<size_t>(n * q_dim));
    for (int64_t i = 0; i < n * n_head; ++i) {
        std::copy_n(qg + i * 2 * hd, hd, q + i * hd);
        std::copy_n(qg + i * 2 * hd + hd, hd, gate + i * hd);
    }

    cpu_rms_norm(q, w.q_norm.f32(), n * n_head, hd, cfg.rms_eps, q, ctx);
    cpu_rms_norm(k, w.k_norm.f32(), n * cfg.n_head_kv, hd, cfg.rms_eps, k, ctx);
    const RopeParams rope{cfg.rope_style, hd, cfg.rope_dims, cfg.rope_base};
    cpu_rope_qk(q, n_head, k, cfg.n_head_kv, n, rope, batch.positions, ctx);

    float* attn = ctx.scratch_floats(kCore, static_cast<size_t>(n * n_head * cfg.head_dim_v));
    AttentionParams ap;
    ap.n_head = n_head;
    ap.n_head_kv = cfg.n_head_kv;
    ap.head_dim_k = hd;
    ap.head_dim_v = cfg.head_dim_v;
    ap.scale = 1.0f / std::sqrt(static_cast<float>(hd));
    if (w.indexer && cfg.indexer.ratio(static_cast<uint32_t>(layer)) > 0) {
        thread_local QsaSelections selections;
        qsa_select(w.indexer, cfg, h, batch, layer, ctx, selections);
        store_and_attend(batch, layer, k, k_dim, v, v_dim, q, ap, attn, ctx, selections.per_sequence());
    } else {
        store_and_attend(batch, layer, k, k_dim, v, v_dim, q, ap, attn, ctx);
    }

    for (int64_t i = 0; i < n * q_dim; ++i) attn[i] *= 1.0f / (1.0f + std::exp(-gate[i]));
    cpu_matmul(w.wo, 0, attn, n, out, ctx);
}

}  // namespace strata
