// qwen4exp (Qwen3.8-Flash-Next), after HF transformers' Qwen4ExpTextModel: the Qwen3.5 hybrid's
// blocks (gated DeltaNet with a sigmoid output gate on 3 of 4 blocks, gated attention on the
// others) on hyper-connected residual streams, the attention made sparse by QSA's indexer, one
// PLE block, and a MoE with a shared expert. Per token the residual R is hc_count streams, each
// starting as the embedding; per block:
//   if PLE: R += PLE(R, tokens)
//   x, a = HC_attn(R);  R_s += a_s · mixer(x)          (mixer: DeltaNet or QSA attention)
//   x, a = HC_ffn(R);   R_s += a_s · (MoE(x) + shared(x))
// then logits = W_out · HC_final(R): the final mixer stands where other models have an output
// norm. The converter folded HF's zero-centred norms' 1 + w into the weights (except the
// DeltaNet's gated norm, which never had one).
#include <string>
#include <vector>

#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/arch/fused_step_model.h"
#include "model/arch/qwen4exp_weights.h"
#include "model/blocks/qsa_indexer.h"
#include "model/model.h"

namespace strata {

namespace {

class Qwen4Exp final : public FusedStepModel {
public:
    explicit Qwen4Exp(const ModelConfig& config) { config_ = config; }

    Status load(const GgufFile& file) {
        STRATA_TRY(load_qwen4exp_weights(file, config_, w_));
        own_state_ = make_recurrent_state();
        return Status::ok();
    }

    KvCache make_kv_cache(int64_t n_ctx) const override {
        KvCache kv = Model::make_kv_cache(n_ctx);
        if (config_.indexer.head_dim > 0) kv.add_index_keys(config_.indexer.head_dim);
        return kv;
    }

    RecurrentState make_recurrent_state() const override {
        const ModelConfig& c = config_;
        std::vector<bool> recurrent(c.n_layer);
        for (uint32_t il = 0; il < c.n_layer; ++il) recurrent[il] = c.is_recurrent_layer(il);
        const int64_t conv_ch = 2 * int64_t{c.ssm_n_group} * c.ssm_d_state + c.ssm_d_inner;
        const int64_t d_v = c.ssm_d_inner / c.ssm_dt_rank;
        RecurrentState state(recurrent, (c.ssm_conv_kernel - 1) * conv_ch, int64_t{c.ssm_dt_rank} * c.ssm_d_state * d_v);
        if (c.ple.layer >= 0) {
            state.add_history(c.ple.layer, ple_history_floats(c), ple_history_tokens(c), c.ple.eos_token);
        }
        state.clear();  // the token history starts EOS-filled
        return state;
    }

    // One sequence at a time through the model's own state; a batch at position 0 starts over.
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) override {
        STRATA_CHECK(batch.pos0 == 0 || &kv == own_state_kv_,
                     "plain forward() of a hybrid model serves one sequence at a time: use forward_with_state()");
        own_state_kv_ = &kv;
        forward_with_state(batch, kv, own_state_, logits, which, ctx);
    }

    void forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits, LogitsFor which,
                            CpuContext& ctx) override {
        const SequenceStep step{batch.tokens, batch.n_tokens, batch.pos0, &kv, &state, logits, which};
        run(std::span(&step, 1), batch.expert_source, ctx);
    }

    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) override {
        const ModelConfig& c = config_;
        for (const SequenceStep& s : steps) {
            STRATA_CHECK(s.state != nullptr, "a hybrid model needs each sequence's recurrent state");
            if (s.pos0 == 0) s.state->clear();
            STRATA_CHECK(s.pos0 == s.state->n_past(),
                         "a recurrent state cannot be rewound: the batch must start where the last one ended");
        }
        float* embedded = nullptr;
        const Batch& batch = gather_and_embed(steps, expert_source, w_.token_embd, embedded);
        const int64_t n = batch.n_tokens, e = c.n_embd, hc = c.hc_count, wide = hc * e;
        streams_.resize(static_cast<size_t>(n * wide));
        input_.resize(static_cast<size_t>(n * e));
        output_.resize(static_cast<size_t>(n * e));
        shared_.resize(static_cast<size_t>(n * e));
        inject_.resize(static_cast<size_t>(n * hc));
        float* R = streams_.data();
        for (int64_t t = 0; t < n; ++t) {
            for (int64_t s = 0; s < hc; ++s) std::copy_n(embedded + t * e, e, R + (t * hc + s) * e);
        }
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const Qwen4ExpLayer& L = w_.layers[il];
            if (L.has_ple) ple_block(L.ple, c, R, batch, il, ctx);

            hyper_connection_mix(L.hc_attn, c, R, n, input_.data(), inject_.data(), ctx);
            if (L.recurrent) gated_delta_net(L.delta, c, input_.data(), batch, il, ctx, output_.data());
            else gated_attention(L.attn, c, input_.data(), batch, il, ctx, output_.data());
            hyper_connection_combine(output_.data(), inject_.data(), n, c, R);

            hyper_connection_mix(L.hc_ffn, c, R, n, input_.data(), inject_.data(), ctx);
            // HF sums the routed experts into zeros, then adds the gated shared expert.
            std::fill(output_.begin(), output_.end(), 0.0f);
            moe_ffn(L.moe, c, input_.data(), batch, ctx, output_.data());
            shared_expert_ffn(L.shared, c, input_.data(), n, shared_.data(), ctx);
            cpu_add(output_.data(), shared_.data(), n * e);
            hyper_connection_combine(output_.data(), inject_.data(), n, c, R);
        }
        for (const SequenceStep& s : steps) s.state->advance(s.n_tokens);
        // Two pointers captured: kept by the std::function without allocating.
        const StepBatch::HeadInput final_mixer = [this, &ctx](const float* rows, int64_t count, float* out) {
            hyper_connection_mix(w_.output_hc, config_, rows, count, out, nullptr, ctx);
        };
        gathered_.write_logits(R, wide, final_mixer, w_.output, c, hybrid_slots::kNormed, ctx);
    }

private:
    Qwen4ExpWeights w_;
    std::vector<float> streams_, input_, output_, shared_, inject_;
    RecurrentState own_state_;              // the state plain forward() uses
    const KvCache* own_state_kv_ = nullptr;  // the cache of the sequence own_state_ belongs to
};

}  // namespace

Result<std::unique_ptr<Model>> load_qwen4exp(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<Qwen4Exp>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
