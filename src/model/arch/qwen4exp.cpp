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
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/arch/recurrent_step_model.h"
#include "model/arch/qwen4exp_weights.h"
#include "model/blocks/qsa_indexer.h"
#include "model/blocks/residual_streams.h"
#include "model/model.h"
#include "model/ple_table.h"

namespace strata {

namespace {

class Qwen4Exp final : public RecurrentStepModel {
public:
    explicit Qwen4Exp(const ModelConfig& config) { config_ = config; }

    Status load(const GgufFile& file) {
        STRATA_TRY(load_qwen4exp_weights(file, config_, w_));
        STRATA_TRY(place_ple_table(file, PleTableOptions{}));
        reset_own_state();
        return Status::ok();
    }

    Status place_ple_table(const GgufFile& file, const PleTableOptions& options) override {
        if (config_.ple.layer < 0) return Status::ok();
        STRATA_ASSIGN_OR_RETURN(ple_table_, PleTable::open(file, w_.layers[static_cast<size_t>(config_.ple.layer)].ple.table, options));
        return Status::ok();
    }
    const PleTable* ple_table() const override { return ple_table_.get(); }

    KvCache make_kv_cache(int64_t n_ctx) const override {
        KvCache kv = Model::make_kv_cache(n_ctx);
        if (config_.indexer.head_dim > 0) kv.add_index_keys(config_.indexer.head_dim);
        return kv;
    }

    RecurrentState make_recurrent_state() const override {
        RecurrentState state = hybrid_recurrent_state(config_);
        const ModelConfig& c = config_;
        if (c.ple.layer >= 0) {
            state.add_history(c.ple.layer, ple_history_floats(c), ple_history_tokens(c), c.ple.eos_token);
        }
        state.clear();  // the token history starts EOS-filled
        return state;
    }

    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) override {
        const ModelConfig& c = config_;
        begin_steps(steps);
        float* embedded = nullptr;
        const Batch& batch = gather_and_embed(steps, expert_source, w_.token_embd, embedded);
        const int64_t n = batch.n_tokens, e = c.n_embd, hc = c.hc_count, wide = hc * e;
        float* R = start_residual_streams(embedded, n, e, hc, streams_);
        input_.resize(static_cast<size_t>(n * e));
        output_.resize(static_cast<size_t>(n * e));
        shared_.resize(static_cast<size_t>(n * e));
        inject_.resize(static_cast<size_t>(n * hc));
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const Qwen4ExpLayer& L = w_.layers[il];
            if (L.has_ple) ple_block(L.ple, *ple_table_, c, R, batch, il, ctx);

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
        end_steps(steps);
        // Two pointers captured: kept by the std::function without allocating.
        const StepBatch::HeadInput final_mixer = [this, &ctx](const float* rows, int64_t count, float* out) {
            hyper_connection_mix(w_.output_hc, config_, rows, count, out, nullptr, ctx);
        };
        gathered_.write_logits(R, wide, final_mixer, w_.output, c, hybrid_slots::kNormed, ctx);
    }

private:
    Qwen4ExpWeights w_;
    std::unique_ptr<PleTable> ple_table_;  // where the PLE block's n-gram rows come from
    std::vector<float> streams_, input_, output_, shared_, inject_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_qwen4exp(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<Qwen4Exp>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
