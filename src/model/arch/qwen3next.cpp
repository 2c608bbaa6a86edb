// Qwen3-Next and Qwen3.5-MoE: hybrid stacks of gated DeltaNet (linear attention) layers with a
// gated full-attention layer every full_attention_interval-th layer, each followed by a
// softmax-routed MoE plus a shared expert whose output is scaled by a sigmoid gate.
//   qwen3next — Qwen3-Next-80B-A3B: fused b/a projection (ssm_ba), v heads in HF's grouped order
//   qwen35moe — Qwen3.5 MoE text model: separate ssm_beta / ssm_alpha, v heads reordered by the
//               converter to tiled order; interleaved M-RoPE, which is plain rope for text
// Recipe per layer: x += mixer(norm(x)); x += moe(norm(x)) + sigmoid(g·h) · shared(h); then
// norm → output head. HF's zero-centred norms (x · (1 + w)) arrive with the 1 already added by
// llama.cpp's converter, so every norm here is a plain RMS norm; only the DeltaNet's gated norm
// (ssm_norm) was never zero-centred.
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/arch/recurrent_step_model.h"
#include "model/arch/qwen3next_weights.h"
#include "model/blocks/gated_delta_net_block.h"
#include "model/model.h"
#include "model/weights.h"

namespace strata {

namespace {

// Scratch slot of the shared expert's normalized input (after those of the mixer blocks).
constexpr int kSharedNormed = hybrid_slots::kV + 1;

// The shared expert's output, before the routed experts add to x: HF adds both to the residual
// of the same layer input.
void shared_expert(const SharedExpertWeights& w, const Weight& norm, const ModelConfig& cfg, const float* x, float* out,
                   int64_t n, CpuContext& ctx) {
    float* h = ctx.scratch_floats(kSharedNormed, static_cast<size_t>(n * cfg.n_embd));
    cpu_rms_norm(x, norm.f32(), n, cfg.n_embd, cfg.rms_eps, h, ctx);
    shared_expert_ffn(w, cfg, h, n, out, ctx);
}

class Qwen3Next final : public RecurrentStepModel {
public:
    explicit Qwen3Next(const ModelConfig& config) { config_ = config; }

    // The tensor table is shared with the GPU forward (qwen3next_weights.h).
    Status load(const GgufFile& file) {
        HybridWeights w;
        STRATA_TRY(load_hybrid_weights(file, config_, w));
        token_embd_ = w.token_embd, output_norm_ = w.output_norm, output_ = w.output;
        layers_ = std::move(w.layers);
        reset_own_state();
        return Status::ok();
    }

    RecurrentState make_recurrent_state() const override { return hybrid_recurrent_state(config_); }

    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) override {
        const ModelConfig& c = config_;
        begin_steps(steps);
        float* x = nullptr;
        const Batch& batch = gather_and_embed(steps, expert_source, token_embd_, x);
        const int64_t n = batch.n_tokens, e = c.n_embd;
        shared_out_.resize(static_cast<size_t>(n * e));
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const HybridLayer& L = layers_[il];
            if (L.recurrent) gated_delta_net_block(L.delta, c, x, batch, il, ctx);
            else gated_attention_block(L.attn, c, x, batch, il, ctx);
            shared_expert(L.shared, L.moe.norm, c, x, shared_out_.data(), n, ctx);
            moe_ffn_block(L.moe, c, x, batch, ctx);
            cpu_add(x, shared_out_.data(), n * e);
        }
        end_steps(steps);
        gathered_.write_logits(x, output_norm_, output_, c, hybrid_slots::kNormed, ctx);
    }

private:
    Weight token_embd_, output_norm_, output_;
    std::vector<HybridLayer> layers_;
    std::vector<float> shared_out_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_qwen3next(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<Qwen3Next>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
