// DeepSeek-V2/V3 (GGUF architecture "deepseek2"): multi-head latent attention and a fine-grained
// MoE with shared experts.
// Recipe per layer: x += mla_attn(norm(x)); then on h = norm(x):
//   the first leading_dense_block_count layers: x += swiglu_ffn(h)
//   the rest: x += shared_expert(h) + Σ_chosen w_e · expert_e(h), experts chosen by the grouped
//   sigmoid router (V3) with the correction bias used for the choice only.
// Then norm → output head. Only the split-kv_b layout of llama.cpp's current converter
// (attn_k_b / attn_v_b, one latent kv head) is read; older files with attn_kv_b are refused.
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "model/arch/step_batch.h"
#include "model/blocks/mla_attention_block.h"
#include "model/blocks/moe_routing.h"
#include "model/model.h"
#include "model/weights.h"

namespace strata {

namespace {

struct DeepseekMoe {
    Weight norm;                 // [n_embd]
    Weight router;               // [n_embd, n_expert]
    Weight router_bias;          // [n_expert] exp_probs_b: e_score_correction_bias (optional)
    RoutedExpertWeights experts;
    Weight gate_sh, up_sh;       // [n_embd, n_ff_expert * n_expert_shared]
    Weight down_sh;              // [n_ff_expert * n_expert_shared, n_embd]
};

struct DeepseekLayer {
    MlaAttentionWeights attn;
    bool moe = false;
    DenseFfnWeights ffn;
    DeepseekMoe moe_ffn;
};

class Deepseek2 final : public Model {
public:
    explicit Deepseek2(const ModelConfig& config) { config_ = config; }

    Status load(const GgufFile& file) {
        const ModelConfig& c = config_;
        STRATA_TRY(check_config(file));
        const int64_t e = c.n_embd, v = c.n_vocab, n_head = c.n_head;
        const int64_t lora = c.kv_lora_rank, r = c.rope_dims, dk = c.head_dim_k_mla, dv = c.head_dim_v_mla;
        WeightLoader w(file);
        token_embd_ = w.require("token_embd.weight", {e, v});
        output_norm_ = w.require_f32("output_norm.weight", {e});
        output_ = w.optional("output.weight", {e, v});
        if (!output_) output_ = token_embd_;
        layers_.resize(c.n_layer);
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const std::string b = "blk." + std::to_string(il) + ".";
            DeepseekLayer& L = layers_[il];
            MlaAttentionWeights& a = L.attn;
            a.norm = w.require_f32(b + "attn_norm.weight", {e});
            if (c.q_lora_rank > 0) {
                a.q_a = w.require(b + "attn_q_a.weight", {e, c.q_lora_rank});
                a.q_a_norm = w.require_f32(b + "attn_q_a_norm.weight", {c.q_lora_rank});
                a.q_b = w.require(b + "attn_q_b.weight", {c.q_lora_rank, n_head * dk});
            } else {
                a.wq = w.require(b + "attn_q.weight", {e, n_head * dk});
            }
            a.kv_a = w.require(b + "attn_kv_a_mqa.weight", {e, lora + r});
            a.kv_a_norm = w.require_f32(b + "attn_kv_a_norm.weight", {lora});
            a.k_b = w.require(b + "attn_k_b.weight", {dk - r, lora, n_head});
            a.v_b = w.require(b + "attn_v_b.weight", {lora, dv, n_head});
            a.wo = w.require(b + "attn_output.weight", {n_head * dv, e});

            if (il < c.n_leading_dense || !c.is_moe()) {
                L.ffn.norm = w.require_f32(b + "ffn_norm.weight", {e});
                L.ffn.gate = w.require(b + "ffn_gate.weight", {e, c.n_ff});
                L.ffn.up = w.require(b + "ffn_up.weight", {e, c.n_ff});
                L.ffn.down = w.require(b + "ffn_down.weight", {c.n_ff, e});
                continue;
            }
            L.moe = true;
            DeepseekMoe& m = L.moe_ffn;
            const int64_t ff = c.n_ff_expert, n_exp = c.n_expert, ff_sh = ff * c.n_expert_shared;
            m.norm = w.require_f32(b + "ffn_norm.weight", {e});
            m.router = w.require(b + "ffn_gate_inp.weight", {e, n_exp});
            m.router_bias = w.optional_f32(b + "exp_probs_b.bias", {n_exp});
            m.experts.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, ff, n_exp});
            m.experts.up_exps = w.require(b + "ffn_up_exps.weight", {e, ff, n_exp});
            m.experts.down_exps = w.require(b + "ffn_down_exps.weight", {ff, e, n_exp});
            if (ff_sh > 0) {
                m.gate_sh = w.require(b + "ffn_gate_shexp.weight", {e, ff_sh});
                m.up_sh = w.require(b + "ffn_up_shexp.weight", {e, ff_sh});
                m.down_sh = w.require(b + "ffn_down_shexp.weight", {ff_sh, e});
            }
        }
        STRATA_TRY(w.status());

        // YaRN (long-context checkpoints): the frequencies are rescaled, and the softmax scale
        // grows by mscale² with mscale = 1 + yarn_log_multiplier · ln(factor) (HF: mscale_all_dim).
        // The cos/sin magnitude stays 1: HF's attention_factor is mscale / mscale_all_dim, and
        // published DeepSeek configs set the two equal (GGUF keeps only the latter).
        kq_scale_ = 1.0f / std::sqrt(static_cast<float>(dk));
        if (c.rope_yarn && c.rope_scaling_factor > 1.0f) {
            YarnParams y{c.rope_scaling_factor, c.rope_orig_ctx, c.yarn_beta_fast, c.yarn_beta_slow, 1.0f, true};
            rope_ = rope_table_yarn(c.rope_style, r, c.rope_base, y);
            const float mscale = 1.0f + c.yarn_log_multiplier * std::log(c.rope_scaling_factor);
            kq_scale_ *= mscale * mscale;
        } else {
            rope_ = rope_table_default(c.rope_style, r, c.rope_base);
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
            const DeepseekLayer& L = layers_[il];
            mla_attention_block(L.attn, c, rope_, kq_scale_, x, batch, il, ctx);
            if (L.moe) moe_block(L.moe_ffn, x, n, batch.expert_source, ctx);
            else dense_ffn_block(L.ffn, c, x, batch, ctx);
        }
        gathered_.write_logits(x, output_norm_, output_, c, block_slots::kNormed, ctx);
    }

private:
    // The file must be in the absorbed-MLA layout the block computes with.
    Status check_config(const GgufFile& file) const {
        const ModelConfig& c = config_;
        if (c.kv_lora_rank == 0 || c.head_dim_k_mla <= c.rope_dims || c.head_dim_v_mla == 0) {
            return Status::error("{}: deepseek2: expected attention.kv_lora_rank, key_length_mla > rope dims and "
                                 "value_length_mla; got {}, {}, {} — convert with a current llama.cpp",
                                 file.path(), c.kv_lora_rank, c.head_dim_k_mla, c.head_dim_v_mla);
        }
        if (c.n_head_kv != 1 || c.head_dim_k != c.kv_lora_rank + c.rope_dims || c.head_dim_v != c.kv_lora_rank) {
            return Status::error("{}: deepseek2: expected one latent kv head of key_length {} and value_length {}, "
                                 "got {} heads of {} and {}",
                                 file.path(), c.kv_lora_rank + c.rope_dims, c.kv_lora_rank, c.n_head_kv, c.head_dim_k,
                                 c.head_dim_v);
        }
        if (c.is_moe()) {
            if (c.n_expert_group == 0 || c.n_expert % c.n_expert_group != 0 || c.n_expert_group_used == 0 ||
                c.n_expert_group_used > c.n_expert_group ||
                c.n_expert_used > c.n_expert_group_used * (c.n_expert / c.n_expert_group)) {
                return Status::error("{}: deepseek2: expert groups {} (used {}) do not fit {} experts, {} per token",
                                     file.path(), c.n_expert_group, c.n_expert_group_used, c.n_expert, c.n_expert_used);
            }
            if (c.expert_gating_func > 2) {
                return Status::error("{}: deepseek2.expert_gating_func: expected 1 (softmax) or 2 (sigmoid), got {}",
                                     file.path(), c.expert_gating_func);
            }
        }
        return Status::ok();
    }

    // h = norm(x); x += shared(h) + Σ routed(h). Both read h, which stays in kNormed: the
    // shared expert uses kGate/kUp/kProj, the routed pass kGather/kGate/kUp/kExpertOut.
    void moe_block(const DeepseekMoe& m, float* x, int64_t n, MoeExpertSource* expert_source, CpuContext& ctx) {
        using namespace block_slots;
        const ModelConfig& c = config_;
        const int64_t e = c.n_embd;
        float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
        cpu_rms_norm(x, m.norm.f32(), n, e, c.rms_eps, h);

        float* logits = ctx.scratch_floats(kRouter, static_cast<size_t>(n * c.n_expert));
        cpu_matmul(m.router, 0, h, n, logits, ctx);
        GroupedRouting rp;
        rp.n_expert = c.n_expert;
        rp.n_used = c.n_expert_used;
        rp.n_group = c.n_expert_group;
        rp.n_group_used = c.n_expert_group_used;
        rp.sigmoid = c.expert_gating_func != 1;  // absent key: V3's sigmoid, as llama.cpp assumes
        rp.selection_bias = m.router_bias ? m.router_bias.f32() : nullptr;
        rp.normalize = c.norm_topk_prob;
        rp.scale = c.expert_weights_scale;
        route_grouped(logits, n, rp, routed_);

        if (m.gate_sh) {
            const int64_t ff = m.gate_sh.ne[1];
            float* gate = ctx.scratch_floats(kGate, static_cast<size_t>(n * ff));
            float* up = ctx.scratch_floats(kUp, static_cast<size_t>(n * ff));
            float* out = ctx.scratch_floats(kProj, static_cast<size_t>(n * e));
            cpu_matmul(m.gate_sh, 0, h, n, gate, ctx);
            cpu_matmul(m.up_sh, 0, h, n, up, ctx);
            cpu_swiglu(gate, up, n * ff);
            cpu_matmul(m.down_sh, 0, gate, n, out, ctx);
            cpu_add(x, out, n * e);
        }
        apply_routed_experts(m.experts, ExpertActivation::SwiGlu, h, e, routed_, x, ctx, expert_source);
    }

    Weight token_embd_, output_norm_, output_;
    std::vector<DeepseekLayer> layers_;
    RopeTable rope_;
    float kq_scale_ = 1.0f;
    StepBatch gathered_;
    std::vector<float> residual_;
    ExpertAssignments routed_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_deepseek2(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<Deepseek2>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
