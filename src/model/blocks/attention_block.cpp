#include <algorithm>
#include <cmath>

#include "backend/cpu/attention.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "model/blocks/blocks.h"

namespace strata {

void attention_block(const AttentionWeights& w, const ModelConfig& cfg, float* x, const Batch& batch, int64_t layer,
                     CpuContext& ctx) {
    using namespace block_slots;
    const int64_t n = batch.n_tokens, e = cfg.n_embd;
    const int64_t q_dim = cfg.q_dim(), k_dim = cfg.kv_dim_k(), v_dim = cfg.kv_dim_v();

    float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
    cpu_rms_norm(x, w.norm.f32(), n, e, cfg.rms_eps, h, ctx);

    float* q = ctx.scratch_floats(kQ, static_cast<size_t>(n * q_dim));
    float* k = ctx.scratch_floats(kK, static_cast<size_t>(n * k_dim));
    float* v = ctx.scratch_floats(kV, static_cast<size_t>(n * v_dim));
    const MatmulJob qkv[] = {{&w.wq, 0, h, n, q}, {&w.wk, 0, h, n, k}, {&w.wv, 0, h, n, v}};
    cpu_matmul_grouped(qkv, ctx);
    if (w.bq) cpu_add_bias(q, w.bq.f32(), n, q_dim);
    if (w.bk) cpu_add_bias(k, w.bk.f32(), n, k_dim);
    if (w.bv) cpu_add_bias(v, w.bv.f32(), n, v_dim);

    // Qwen3 normalizes each head of q and k before rope.
    if (w.q_norm) cpu_rms_norm(q, w.q_norm.f32(), n * cfg.n_head, cfg.head_dim_k, cfg.rms_eps, q, ctx);
    if (w.k_norm) cpu_rms_norm(k, w.k_norm.f32(), n * cfg.n_head_kv, cfg.head_dim_k, cfg.rms_eps, k, ctx);

    RopeParams rope{cfg.rope_style, cfg.head_dim_k, cfg.rope_dims, cfg.rope_base};
    cpu_rope_qk(q, cfg.n_head, k, cfg.n_head_kv, n, rope, batch.positions, ctx);

    float* attn = ctx.scratch_floats(kAttnOut, static_cast<size_t>(n * cfg.n_head * cfg.head_dim_v));
    AttentionParams ap{cfg.n_head, cfg.n_head_kv, cfg.head_dim_k, cfg.head_dim_v,
                       1.0f / std::sqrt(static_cast<float>(cfg.head_dim_k))};
    store_and_attend(batch, layer, k, k_dim, v, v_dim, q, ap, attn, ctx);

    float* proj = ctx.scratch_floats(kProj, static_cast<size_t>(n * e));
    cpu_matmul(w.wo, 0, attn, n, proj, ctx);
    if (w.bo) cpu_add_bias(proj, w.bo.f32(), n, e);
    cpu_add(x, proj, n * e);
}

}  // namespace strata
