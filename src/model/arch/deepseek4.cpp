// deepseek4 (DeepSeek-V4-Flash), after HF transformers' DeepseekV4Model: per token the residual is
// hc_count streams X, each starting as the embedding; per block
//   x = mHC_attn.pre(X);  X = mHC_attn.post(attention(attn_norm(x)), X)
//   x = mHC_ffn.pre(X);   X = mHC_ffn.post(MoE(ffn_norm(x)) + shared(ffn_norm(x)), X)
// then logits = W_out · output_norm(mHC_head(X)). The attention and its per-sequence state are
// model/blocks/compressed_attention.h; the MoE scores experts by sqrt(softplus), routes the first
// hash_layer_count blocks by a token-id table and the rest by score plus a selection bias, and
// clamps the SwiGLU of routed and shared experts alike.
#include <memory>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/arch/deepseek4_weights.h"
#include "model/arch/recurrent_step_model.h"
#include "model/blocks/moe_routing.h"
#include "model/blocks/residual_streams.h"
#include "model/model.h"

namespace strata {

namespace {

// Scratch above the attention's (compressed_attention.cpp).
constexpr int kRouterLogits = CpuContext::kFirstFreeSlot + 80, kHashIds = kRouterLogits + 1;
constexpr int kSharedGate = kRouterLogits + 2, kSharedUp = kRouterLogits + 3, kSharedOut = kRouterLogits + 4;

class Deepseek4 final : public RecurrentStepModel {
public:
    explicit Deepseek4(const ModelConfig& config) { config_ = config; }

    Status load(const GgufFile& file) {
        STRATA_TRY(load_deepseek4_weights(file, config_, w_));
        ropes_ = compressed_attention_ropes(config_);
        reset_own_state();
        return Status::ok();
    }

    KvCache make_kv_cache(int64_t n_ctx) const override { return make_dsv4_kv_cache(config_, n_ctx, kv_type_); }
    RecurrentState make_recurrent_state() const override { return make_dsv4_state(config_); }

    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) override {
        const ModelConfig& c = config_;
        begin_steps(steps);
        float* embedded = nullptr;
        const Batch& batch = gather_and_embed(steps, expert_source, w_.token_embd, embedded);
        const int64_t n = batch.n_tokens, e = c.n_embd, hc = c.hc_count, wide = hc * e;
        float* X = start_residual_streams(embedded, n, e, hc, streams_);
        input_.resize(static_cast<size_t>(n * e));
        normed_.resize(static_cast<size_t>(n * e));
        output_.resize(static_cast<size_t>(n * e));
        post_.resize(static_cast<size_t>(n * hc));
        comb_.resize(static_cast<size_t>(n * hc * hc));
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const Deepseek4Layer& L = w_.layers[il];
            mhc_pre(L.hc_attn, c, X, n, input_.data(), post_.data(), comb_.data(), ctx);
            cpu_rms_norm(input_.data(), L.attn_norm.f32(), n, e, c.rms_eps, normed_.data(), ctx);
            compressed_attention(L.attn, c, ropes_, normed_.data(), batch, il, output_.data(), ctx);
            mhc_post(output_.data(), post_.data(), comb_.data(), n, c, X);

            mhc_pre(L.hc_ffn, c, X, n, input_.data(), post_.data(), comb_.data(), ctx);
            cpu_rms_norm(input_.data(), L.moe.norm.f32(), n, e, c.rms_eps, normed_.data(), ctx);
            moe(L.moe, normed_.data(), batch, output_.data(), ctx);
            mhc_post(output_.data(), post_.data(), comb_.data(), n, c, X);
        }
        end_steps(steps);
        // Two pointers captured: kept by the std::function without allocating.
        const StepBatch::HeadInput head = [this, &ctx](const float* rows, int64_t count, float* out) {
            head_rows_.resize(static_cast<size_t>(count * config_.n_embd));
            mhc_head(w_.output_hc, config_, rows, count, head_rows_.data(), ctx);
            cpu_rms_norm(head_rows_.data(), w_.output_norm.f32(), count, config_.n_embd, config_.rms_eps, out, ctx);
        };
        gathered_.write_logits(X, wide, head, w_.output, c, block_slots::kNormed, ctx);
    }

private:
    // out = Σ routed experts(h) + shared(h), HF's order (the routed sum into zeros, then the
    // shared expert added).
    void moe(const Deepseek4Moe& m, const float* h, const Batch& batch, float* out, CpuContext& ctx) {
        const ModelConfig& c = config_;
        const int64_t n = batch.n_tokens, e = c.n_embd, k = c.n_expert_used;
        float* logits = ctx.scratch_floats(kRouterLogits, static_cast<size_t>(n * c.n_expert));
        cpu_matmul(m.router, 0, h, n, logits, ctx);
        SqrtSoftplusRouting p{.n_expert = c.n_expert, .n_used = k, .selection_bias = m.bias ? m.bias.f32() : nullptr,
                              .hash_ids = nullptr, .normalize = c.norm_topk_prob, .scale = c.expert_weights_scale};
        if (m.tid2eid) {
            auto* ids = reinterpret_cast<int32_t*>(ctx.scratch(kHashIds, static_cast<size_t>(n * k) * sizeof(int32_t)));
            const auto* table = reinterpret_cast<const int32_t*>(m.tid2eid.data);
            for (int64_t t = 0; t < n; ++t) {
                const int32_t token = batch.tokens[t];
                STRATA_CHECK(token >= 0 && token < static_cast<int32_t>(c.n_vocab), "token id outside the vocabulary");
                std::copy_n(table + static_cast<int64_t>(token) * k, k, ids + t * k);
            }
            p.hash_ids = ids;
        }
        STRATA_CHECK(route_sqrt_softplus(logits, n, p, routed_), "ffn_gate_tid2eid names an expert the model lacks");
        std::fill(out, out + n * e, 0.0f);
        const RoutedExpertWeights experts{m.gate_exps, m.up_exps, m.down_exps, {}, {}, {}, m.limit};
        apply_routed_experts(experts, ExpertActivation::ClampedSwiGlu, h, n, e, routed_, out, ctx, batch.expert_source);

        const int64_t ff = m.gate_shexp.ne[1];
        float* gate = ctx.scratch_floats(kSharedGate, static_cast<size_t>(n * ff));
        float* up = ctx.scratch_floats(kSharedUp, static_cast<size_t>(n * ff));
        float* shared = ctx.scratch_floats(kSharedOut, static_cast<size_t>(n * e));
        const MatmulJob gate_up[] = {{&m.gate_shexp, 0, h, n, gate}, {&m.up_shexp, 0, h, n, up}};
        cpu_matmul_grouped(gate_up, ctx);
        apply_expert_activation(ExpertActivation::ClampedSwiGlu, gate, up, n * ff, m.limit_shared);
        cpu_matmul(m.down_shexp, 0, gate, n, shared, ctx);
        cpu_add(out, shared, n * e);
    }

    Deepseek4Weights w_;
    CompressedAttentionRopes ropes_;
    ExpertAssignments routed_;
    std::vector<float> streams_, input_, normed_, output_, post_, comb_, head_rows_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_deepseek4(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<Deepseek4>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
