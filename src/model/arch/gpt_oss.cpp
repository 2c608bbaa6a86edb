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
#include "model/arch/fused_step_model.h"
#include "model/arch/llama_family.h"
#include "model/blocks/moe_routing.h"
#include "model/model.h"
#include "model/weights.h"

namespace strata {

namespace {

class GptOss final : public FusedStepModel {
public:
    explicit GptOss(const ModelConfig& config) { config_ = config; }

    // The tensor table is the Llama family's (llama_family.h), which names gpt-oss's extras.
    Status load(const GgufFile& file) {
        LlamaWeights w;
        STRATA_TRY(load_llama_weights(file, config_, w));
        token_embd_ = w.token_embd, output_norm_ = w.output_norm, output_ = w.output;
        layers_ = std::move(w.layers);
        rope_ = gpt_oss_rope_table(config_);
        return Status::ok();
    }

    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) override {
        const ModelConfig& c = config_;
        float* x = nullptr;
        const Batch& batch = gather_and_embed(steps, expert_source, token_embd_, x);
        const int64_t n = batch.n_tokens;
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            attention(layers_[il], x, batch, il, ctx);
            moe(layers_[il], x, n, batch.expert_source, ctx);
        }
        gathered_.write_logits(x, output_norm_, output_, c, block_slots::kNormed, ctx);
    }

private:
    // attention_block's steps, with the YaRN rope table, the sinks and the window.
    void attention(const LlamaLayer& L, float* x, const Batch& batch, int64_t layer, CpuContext& ctx) {
        using namespace block_slots;
        const ModelConfig& c = config_;
        const AttentionWeights& w = L.attn;
        const int64_t n = batch.n_tokens, e = c.n_embd;
        const int64_t q_dim = c.q_dim(), k_dim = c.kv_dim_k(), v_dim = c.kv_dim_v();

        float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
        cpu_rms_norm(x, w.norm.f32(), n, e, c.rms_eps, h, ctx);
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
        ap.sinks = L.attn_sinks.f32();
        ap.sliding_window = L.sliding ? c.sliding_window : 0;
        store_and_attend(batch, layer, k, k_dim, v, v_dim, q, ap, attn, ctx);

        float* proj = ctx.scratch_floats(kProj, static_cast<size_t>(n * e));
        cpu_matmul(w.wo, 0, attn, n, proj, ctx);
        cpu_add_bias(proj, w.bo.f32(), n, e);
        cpu_add(x, proj, n * e);
    }

    void moe(const LlamaLayer& L, float* x, int64_t n, MoeExpertSource* expert_source, CpuContext& ctx) {
        using namespace block_slots;
        const ModelConfig& c = config_;
        const int64_t e = c.n_embd;
        float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
        cpu_rms_norm(x, L.moe_ffn.norm.f32(), n, e, c.rms_eps, h, ctx);
        float* logits = ctx.scratch_floats(kRouter, static_cast<size_t>(n * c.n_expert));
        cpu_matmul(L.moe_ffn.router, 0, h, n, logits, ctx);
        cpu_add_bias(logits, L.router_bias.f32(), n, c.n_expert);
        route_topk_softmax(logits, n, c.n_expert, c.n_expert_used, routed_);
        const RoutedExpertWeights experts{L.moe_ffn.gate_exps, L.moe_ffn.up_exps, L.moe_ffn.down_exps,
                                          L.gate_bias, L.up_bias, L.down_bias};
        apply_routed_experts(experts, ExpertActivation::GptOssClampedSwiGlu, h, n, e, routed_, x, ctx, expert_source);
    }

    Weight token_embd_, output_norm_, output_;
    std::vector<LlamaLayer> layers_;
    RopeTable rope_;
    ExpertAssignments routed_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpt_oss(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<GptOss>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
