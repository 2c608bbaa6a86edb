// DeepSeek-V2/V3 (GGUF architecture "deepseek2"): multi-head latent attention and a fine-grained
// MoE with shared experts.
// Recipe per layer: x += mla_attn(norm(x)); then on h = norm(x):
//   the first leading_dense_block_count layers: x += swiglu_ffn(h)
//   the rest: x += shared_expert(h) + Σ_chosen w_e · expert_e(h), experts chosen by the grouped
//   sigmoid router (V3) with the correction bias used for the choice only.
// Then norm → output head. The tensor table, rope and router parameters are shared with the GPU
// forward (deepseek2_weights.h).
#include <span>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "model/arch/deepseek2_weights.h"
#include "model/arch/fused_step_model.h"
#include "model/blocks/mla_attention_block.h"
#include "model/blocks/moe_routing.h"
#include "model/model.h"
#include "model/weights.h"

namespace strata {

namespace {

class Deepseek2 final : public FusedStepModel {
public:
    explicit Deepseek2(const ModelConfig& config) { config_ = config; }

    Status load(const GgufFile& file) {
        STRATA_TRY(load_deepseek2_weights(file, config_, w_));
        const MlaRope rope = deepseek2_rope(config_);
        rope_ = rope.table;
        kq_scale_ = rope.kq_scale;
        return Status::ok();
    }

    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) override {
        const ModelConfig& c = config_;
        float* x = nullptr;
        const Batch& batch = gather_and_embed(steps, expert_source, w_.token_embd, x);
        const int64_t n = batch.n_tokens;
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const Deepseek2Layer& L = w_.layers[il];
            mla_attention_block(L.attn, c, rope_, kq_scale_, x, batch, il, ctx);
            if (L.moe) moe_block(L, x, n, batch.expert_source, ctx);
            else dense_ffn_block(L.ffn, c, x, batch, ctx);
        }
        gathered_.write_logits(x, w_.output_norm, w_.output, c, block_slots::kNormed, ctx);
    }

private:
    // h = norm(x); x += shared(h) + Σ routed(h). Both read h, which stays in kNormed: the
    // shared expert uses kGate/kUp/kProj, the routed pass kGate/kUp/kExpertOut.
    void moe_block(const Deepseek2Layer& L, float* x, int64_t n, MoeExpertSource* expert_source, CpuContext& ctx) {
        using namespace block_slots;
        const ModelConfig& c = config_;
        const MoeFfnWeights& m = L.moe_ffn;
        const int64_t e = c.n_embd;
        float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
        cpu_rms_norm(x, m.norm.f32(), n, e, c.rms_eps, h, ctx);

        float* logits = ctx.scratch_floats(kRouter, static_cast<size_t>(n * c.n_expert));
        cpu_matmul(m.router, 0, h, n, logits, ctx);
        route_grouped(logits, n, deepseek2_routing(c, L.router_bias ? L.router_bias.f32() : nullptr), routed_);

        if (L.gate_sh) {
            const int64_t ff = L.gate_sh.ne[1];
            float* gate = ctx.scratch_floats(kGate, static_cast<size_t>(n * ff));
            float* up = ctx.scratch_floats(kUp, static_cast<size_t>(n * ff));
            float* out = ctx.scratch_floats(kProj, static_cast<size_t>(n * e));
            const MatmulJob gate_up[] = {{&L.gate_sh, 0, h, n, gate}, {&L.up_sh, 0, h, n, up}};
            cpu_matmul_grouped(gate_up, ctx);
            cpu_swiglu(gate, up, n * ff);
            cpu_matmul(L.down_sh, 0, gate, n, out, ctx);
            cpu_add(x, out, n * e);
        }
        const RoutedExpertWeights experts{m.gate_exps, m.up_exps, m.down_exps, {}, {}, {}};
        apply_routed_experts(experts, ExpertActivation::SwiGlu, h, n, e, routed_, x, ctx, expert_source);
    }

    Deepseek2Weights w_;
    RopeTable rope_;
    float kq_scale_ = 1.0f;
    ExpertAssignments routed_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_deepseek2(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<Deepseek2>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
