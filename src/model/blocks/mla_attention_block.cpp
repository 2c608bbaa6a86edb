#include "model/blocks/mla_attention_block.h"

#include <algorithm>

#include "backend/cpu/attention.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"

namespace strata {

namespace {
// Scratch beyond blocks.h's slots: the q latent, the absorbed queries, and one head's
// contiguous input/output for the per-head k_b / v_b products.
constexpr int kQLatent = block_slots::kExpertOut + 1;
constexpr int kQAbsorbed = kQLatent + 1;
constexpr int kHeadIn = kQLatent + 2;
constexpr int kHeadOut = kQLatent + 3;
constexpr int kValues = kQLatent + 4;

// out_rows[t] (stride out_stride) = W_h · in_rows[t] (stride in_stride), for matrix h of a stacked
// per-head weight; the rows are copied to and from contiguous scratch for cpu_matmul.
void per_head_matmul(const Weight& w, int64_t h, const float* in, int64_t in_stride, int64_t n, float* out,
                     int64_t out_stride, CpuContext& ctx) {
    const int64_t n_in = w.ne[0], n_out = w.ne[1];
    float* a = ctx.scratch_floats(kHeadIn, static_cast<size_t>(n * n_in));
    float* b = ctx.scratch_floats(kHeadOut, static_cast<size_t>(n * n_out));
    for (int64_t t = 0; t < n; ++t) std::copy_n(in + t * in_stride, n_in, a + t * n_in);
    cpu_matmul(w, h, a, n, b, ctx);
    for (int64_t t = 0; t < n; ++t) std::copy_n(b + t * n_out, n_out, out + t * out_stride);
}
}  // namespace

void mla_attention_block(const MlaAttentionWeights& w, const ModelConfig& cfg, const RopeTable& rope, float kq_scale,
                         float* x, const Batch& batch, int64_t layer, CpuContext& ctx) {
    using namespace block_slots;
    const int64_t n = batch.n_tokens, e = cfg.n_embd, n_head = cfg.n_head;
    const int64_t lora = cfg.kv_lora_rank, r = cfg.rope_dims;
    const int64_t dk = cfg.head_dim_k_mla, nope = dk - r, dv = cfg.head_dim_v_mla;
    const int64_t latent_k = lora + r;  // one cache row: latent then rope key

    float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
    cpu_rms_norm(x, w.norm.f32(), n, e, cfg.rms_eps, h, ctx);

    // q: through the low-rank bottleneck (normalized in the middle) when the model has one.
    float* q = ctx.scratch_floats(kQ, static_cast<size_t>(n * n_head * dk));
    if (w.q_a) {
        const int64_t q_rank = w.q_a.ne[1];
        float* ql = ctx.scratch_floats(kQLatent, static_cast<size_t>(n * q_rank));
        cpu_matmul(w.q_a, 0, h, n, ql, ctx);
        cpu_rms_norm(ql, w.q_a_norm.f32(), n, q_rank, cfg.rms_eps, ql, ctx);
        cpu_matmul(w.q_b, 0, ql, n, q, ctx);
    } else {
        cpu_matmul(w.wq, 0, h, n, q, ctx);
    }

    // kv_a row: [latent (lora) | rope key (r)]; only the latent is normalized.
    float* kva = ctx.scratch_floats(kK, static_cast<size_t>(n * latent_k));
    cpu_matmul(w.kv_a, 0, h, n, kva, ctx);
    for (int64_t t = 0; t < n; ++t) cpu_rms_norm(kva + t * latent_k, w.kv_a_norm.f32(), 1, lora, cfg.rms_eps, kva + t * latent_k);

    // Rope the last r dims of each query head and the single shared key.
    cpu_rope_table(q + nope, n, n_head, dk, rope, batch.positions);
    cpu_rope_table(kva + lora, n, 1, latent_k, rope, batch.positions);

    // Absorbed queries [n][n_head][lora + r]: q_nope·k_b per head, then the roped part as is, so
    // q_abs · cache_row = q_nope · k_nope + q_rope · k_rope.
    float* qa = ctx.scratch_floats(kQAbsorbed, static_cast<size_t>(n * n_head * latent_k));
    for (int64_t hd = 0; hd < n_head; ++hd) {
        per_head_matmul(w.k_b, hd, q + hd * dk, n_head * dk, n, qa + hd * latent_k, n_head * latent_k, ctx);
        for (int64_t t = 0; t < n; ++t) {
            std::copy_n(q + (t * n_head + hd) * dk + nope, r, qa + (t * n_head + hd) * latent_k + lora);
        }
    }

    // One kv head shared by all query heads; each head's output is a latent of width lora. The
    // cache row is the kv_a row: its keys are [latent | rope key], its values the latent alone.
    float* attn = ctx.scratch_floats(kAttnOut, static_cast<size_t>(n * n_head * lora));
    AttentionParams ap{n_head, 1, latent_k, lora, kq_scale};
    store_and_attend(batch, layer, kva, latent_k, kva, latent_k, qa, ap, attn, ctx);

    float* values = ctx.scratch_floats(kValues, static_cast<size_t>(n * n_head * dv));
    for (int64_t hd = 0; hd < n_head; ++hd) {
        per_head_matmul(w.v_b, hd, attn + hd * lora, n_head * lora, n, values + hd * dv, n_head * dv, ctx);
    }

    float* proj = ctx.scratch_floats(kProj, static_cast<size_t>(n * e));
    cpu_matmul(w.wo, 0, values, n, proj, ctx);
    cpu_add(x, proj, n * e);
}

}  // namespace strata
