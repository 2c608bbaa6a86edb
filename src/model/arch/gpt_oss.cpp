// gpt-oss (GGUF architecture "gpt-oss"): grouped-query attention with biases, per-head attention
// sinks, YaRN rope, sliding-window attention on every other layer, and a MoE FFN with biased
// router and experts and a clamped SwiGLU.
// Recipe per layer: x += attn(norm(x)); x += Σ_top-k softmax(router) · expert(post_attention_norm(x));
// then norm → output head.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/attention.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "backend/cpu/rope_table.h"
#include "model/arch/step_batch.h"
#include "model/blocks/moe_routing.h"
#include "model/model.h"
#include "model/weights.h"

namespace strata {

namespace {

struct GptOssLayer {
    AttentionWeights attn;       // wq/wk/wv/wo with all four biases; norm = attn_norm
    Weight sinks;                // [n_head] attn_sinks: one extra softmax logit per head
    bool sliding = false;        // attends to the last sliding_window positions only
    Weight ffn_norm;             // [n_embd] post_attention_norm
    Weight router, router_bias;  // [n_embd, n_expert], [n_expert]
    RoutedExpertWeights experts; // with gate/up/down biases
};

class GptOss final : public Model {
public:
    explicit GptOss(const ModelConfig& config) { config_ = config; }

    Status load(const GgufFile& file) {
        const ModelConfig& c = config_;
        if (!c.is_moe()) return Status::error("{}: gpt-oss: expected expert_count > 0", file.path());
        const int64_t e = c.n_embd, v = c.n_vocab, n_exp = c.n_expert, ff = c.n_ff_expert;
        WeightLoader w(file);
        token_embd_ = w.require("token_embd.weight", {e, v});
        output_norm_ = w.require_f32("output_norm.weight", {e});
        output_ = w.optional("output.weight", {e, v});
        if (!output_) output_ = token_embd_;
        layers_.resize(c.n_layer);
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const std::string b = "blk." + std::to_string(il) + ".";
            GptOssLayer& L = layers_[il];
            L.attn.norm = w.require_f32(b + "attn_norm.weight", {e});
            L.attn.wq = w.require(b + "attn_q.weight", {e, c.q_dim()});
            L.attn.wk = w.require(b + "attn_k.weight", {e, c.kv_dim_k()});
            L.attn.wv = w.require(b + "attn_v.weight", {e, c.kv_dim_v()});
            L.attn.wo = w.require(b + "attn_output.weight", {c.n_head * c.head_dim_v, e});
            L.attn.bq = w.require_f32(b + "attn_q.bias", {c.q_dim()});
            L.attn.bk = w.require_f32(b + "attn_k.bias", {c.kv_dim_k()});
            L.attn.bv = w.require_f32(b + "attn_v.bias", {c.kv_dim_v()});
            L.attn.bo = w.require_f32(b + "attn_output.bias", {e});
            L.sinks = w.require_f32(b + "attn_sinks.weight", {c.n_head});
            // GGUF has no per-layer flag: gpt-oss alternates sliding and full attention starting
            // with sliding (HF layer_types; llama.cpp's swa pattern 2, layer il slides iff il is even).
            L.sliding = c.sliding_window > 0 && il % 2 == 0;
            L.ffn_norm = w.require_f32(b + "post_attention_norm.weight", {e});
            L.router = w.require(b + "ffn_gate_inp.weight", {e, n_exp});
            L.router_bias = w.require_f32(b + "ffn_gate_inp.bias", {n_exp});
            L.experts.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, ff, n_exp});
            L.experts.up_exps = w.require(b + "ffn_up_exps.weight", {e, ff, n_exp});
            L.experts.down_exps = w.require(b + "ffn_down_exps.weight", {ff, e, n_exp});
            L.experts.gate_bias = w.require_f32(b + "ffn_gate_exps.bias", {ff, n_exp});
            L.experts.up_bias = w.require_f32(b + "ffn_up_exps.bias", {ff, n_exp});
            L.experts.down_bias = w.require_f32(b + "ffn_down_exps.bias", {e, n_exp});
        }
        STRATA_TRY(w.status());

        // HF GptOss: YaRN with the ramp's ends not rounded (truncate = false in every released
        // config) and cos/sin scaled by get_mscale(factor) = 0.1 ln(factor) + 1.
        if (c.rope_yarn && c.rope_scaling_factor > 1.0f) {
            YarnParams y{c.rope_scaling_factor, c.rope_orig_ctx, c.yarn_beta_fast, c.yarn_beta_slow,
                         yarn_mscale(c.rope_scaling_factor), false};
            rope_ = rope_table_yarn(c.rope_style, c.rope_dims, c.rope_base, y);
        } else {
            rope_ = rope_table_default(c.rope_style, c.rope_dims, c.rope_base);
        }
        return Status::ok();
    }

    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) override {
        const SequenceStep step{batch.tokens, batch.n_tokens, batch.pos0, &kv, nullptr, logits, which};
        run(std::span(&step, 1), batch.expert_source, ctx);
    }
    void forward_multi(std::span<const SequenceStep> steps, CpuContext& ctx) override { run(steps, nullptr, ctx); }
    bool fuses_sequences() const override { return true; }

    // One sequence or several, the same code: a one-step batch is the single-sequence forward.
    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) {
        const ModelConfig& c = config_;
        const Batch& batch = gathered_.gather(steps, expert_source);
        const int64_t n = batch.n_tokens, e = c.n_embd;
        residual_.resize(static_cast<size_t>(n * e));
        float* x = residual_.data();
        cpu_get_rows(token_embd_, batch.tokens, n, x);
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            attention(layers_[il], x, batch, il, ctx);
            moe(layers_[il], x, n, batch.expert_source, ctx);
        }
        gathered_.write_logits(x, output_norm_, output_, c, block_slots::kNormed, ctx);
    }

private:
    // attention_block's steps, with the YaRN rope table, the sinks and the window.
    void attention(const GptOssLayer& L, float* x, const Batch& batch, int64_t layer, CpuContext& ctx) {
        using namespace block_slots;
        const ModelConfig& c = config_;
        const AttentionWeights& w = L.attn;
        const int64_t n = batch.n_tokens, e = c.n_embd;
        const int64_t q_dim = c.q_dim(), k_dim = c.kv_dim_k(), v_dim = c.kv_dim_v();

        float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
        cpu_rms_norm(x, w.norm.f32(), n, e, c.rms_eps, h);
        float* q = ctx.scratch_floats(kQ, static_cast<size_t>(n * q_dim));
        float* k = ctx.scratch_floats(kK, static_cast<size_t>(n * k_dim));
        float* v = ctx.scratch_floats(kV, static_cast<size_t>(n * v_dim));
        cpu_matmul(w.wq, 0, h, n, q, ctx);
        cpu_matmul(w.wk, 0, h, n, k, ctx);
        cpu_matmul(w.wv, 0, h, n, v, ctx);
        cpu_add_bias(q, w.bq.f32(), n, q_dim);
        cpu_add_bias(k, w.bk.f32(), n, k_dim);
        cpu_add_bias(v, w.bv.f32(), n, v_dim);
        cpu_rope_table(q, n, c.n_head, c.head_dim_k, rope_, batch.positions);
        cpu_rope_table(k, n, c.n_head_kv, c.head_dim_k, rope_, batch.positions);
        float* attn = ctx.scratch_floats(kAttnOut, static_cast<size_t>(n * c.n_head * c.head_dim_v));
        AttentionParams ap{c.n_head, c.n_head_kv, c.head_dim_k, c.head_dim_v,
                           1.0f / std::sqrt(static_cast<float>(c.head_dim_k))};
        ap.sinks = L.sinks.f32();
        ap.sliding_window = L.sliding ? c.sliding_window : 0;
        store_and_attend(batch, layer, k, k_dim, v, v_dim, q, ap, attn, ctx);

        float* proj = ctx.scratch_floats(kProj, static_cast<size_t>(n * e));
        cpu_matmul(w.wo, 0, attn, n, proj, ctx);
        cpu_add_bias(proj, w.bo.f32(), n, e);
        cpu_add(x, proj, n * e);
    }

    void moe(const GptOssLayer& L, float* x, int64_t n, MoeExpertSource* expert_source, CpuContext& ctx) {
        using namespace block_slots;
        const ModelConfig& c = config_;
        const int64_t e = c.n_embd;
        float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
        cpu_rms_norm(x, L.ffn_norm.f32(), n, e, c.rms_eps, h);
        float* logits = ctx.scratch_floats(kRouter, static_cast<size_t>(n * c.n_expert));
        cpu_matmul(L.router, 0, h, n, logits, ctx);
        cpu_add_bias(logits, L.router_bias.f32(), n, c.n_expert);
        route_topk_softmax(logits, n, c.n_expert, c.n_expert_used, routed_);
        apply_routed_experts(L.experts, ExpertActivation::GptOssClampedSwiGlu, h, e, routed_, x, ctx, expert_source);
    }

    Weight token_embd_, output_norm_, output_;
    std::vector<GptOssLayer> layers_;
    RopeTable rope_;
    StepBatch gathered_;
    std::vector<float> residual_;
    ExpertAssignments routed_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpt_oss(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<GptOss>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
