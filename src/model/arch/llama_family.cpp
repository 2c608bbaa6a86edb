// The Llama family: pre-norm decoder blocks of grouped-query attention and a SwiGLU FFN.
//   llama    — Llama 2/3, Mistral; with experts (expert_count > 0) Mixtral
//   qwen3    — adds per-head q/k RMS norms, NEOX rope, often tied embeddings
//   qwen3moe — Qwen3 attention with a softmax-routed MoE FFN (Qwen3-30B-A3B, 235B-A22B)
// Recipe per layer: x += attn(norm(x)); x += ffn(norm(x)); then norm → output head.
#include <string>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "model/arch/fused_step_model.h"
#include "model/arch/llama_family.h"
#include "model/model.h"

namespace strata {

Status load_llama_weights(const GgufFile& file, const ModelConfig& c, LlamaWeights& out) {
    const int64_t e = c.n_embd, v = c.n_vocab;
    const bool gpt_oss = architecture(c.arch).family == ArchFamily::GptOss;
    if (gpt_oss && !c.is_moe()) return Status::error("{}: gpt-oss: expected expert_count > 0", file.path());
    WeightLoader w(file);
    w.embedding_and_head(e, v, out.token_embd, out.output_norm, out.output);
    out.layers.resize(c.n_layer);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        LlamaLayer& L = out.layers[il];
        L.attn.norm = w.require_f32(b + "attn_norm.weight", {e});
        L.attn.wq = w.require(b + "attn_q.weight", {e, c.q_dim()});
        L.attn.wk = w.require(b + "attn_k.weight", {e, c.kv_dim_k()});
        L.attn.wv = w.require(b + "attn_v.weight", {e, c.kv_dim_v()});
        L.attn.wo = w.require(b + "attn_output.weight", {c.n_head * c.head_dim_v, e});
        L.attn.bq = w.optional_f32(b + "attn_q.bias", {c.q_dim()});
        L.attn.bk = w.optional_f32(b + "attn_k.bias", {c.kv_dim_k()});
        L.attn.bv = w.optional_f32(b + "attn_v.bias", {c.kv_dim_v()});
        L.attn.bo = w.optional_f32(b + "attn_output.bias", {e});
        if (gpt_oss) {
            L.attn.bq = w.require_f32(b + "attn_q.bias", {c.q_dim()});
            L.attn.bk = w.require_f32(b + "attn_k.bias", {c.kv_dim_k()});
            L.attn.bv = w.require_f32(b + "attn_v.bias", {c.kv_dim_v()});
            L.attn.bo = w.require_f32(b + "attn_output.bias", {e});
            L.attn_sinks = w.require_f32(b + "attn_sinks.weight", {c.n_head});
            // GGUF has no per-layer flag: gpt-oss alternates sliding and full attention starting
            // with sliding (HF layer_types; llama.cpp's swa pattern 2, layer il slides iff il is even).
            L.sliding = c.sliding_window > 0 && il % 2 == 0;
        }
        if (architecture(c.arch).traits.qk_norm) {
            L.attn.q_norm = w.require_f32(b + "attn_q_norm.weight", {c.head_dim_k});
            L.attn.k_norm = w.require_f32(b + "attn_k_norm.weight", {c.head_dim_k});
        }
        if (c.is_moe()) {
            L.moe = true;
            const int64_t ff = c.n_ff_expert, n_exp = c.n_expert;
            L.moe_ffn.norm = w.require_f32(b + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"), {e});
            L.moe_ffn.router = w.require(b + "ffn_gate_inp.weight", {e, n_exp});
            L.moe_ffn.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, ff, n_exp});
            L.moe_ffn.up_exps = w.require(b + "ffn_up_exps.weight", {e, ff, n_exp});
            L.moe_ffn.down_exps = w.require(b + "ffn_down_exps.weight", {ff, e, n_exp});
            if (gpt_oss) {
                L.router_bias = w.require_f32(b + "ffn_gate_inp.bias", {n_exp});
                L.gate_bias = w.require_f32(b + "ffn_gate_exps.bias", {ff, n_exp});
                L.up_bias = w.require_f32(b + "ffn_up_exps.bias", {ff, n_exp});
                L.down_bias = w.require_f32(b + "ffn_down_exps.bias", {e, n_exp});
            }
        } else {
            L.ffn.norm = w.require_f32(b + "ffn_norm.weight", {e});
            L.ffn.gate = w.require(b + "ffn_gate.weight", {e, c.n_ff});
            L.ffn.up = w.require(b + "ffn_up.weight", {e, c.n_ff});
            L.ffn.down = w.require(b + "ffn_down.weight", {c.n_ff, e});
        }
    }
    return w.status();
}

RopeTable gpt_oss_rope_table(const ModelConfig& c) {
    if (c.rope_yarn && c.rope_scaling_factor > 1.0f) {
        const YarnParams y{c.rope_scaling_factor, c.rope_orig_ctx, c.yarn_beta_fast, c.yarn_beta_slow,
                           yarn_mscale(c.rope_scaling_factor), false};
        return rope_table_yarn(c.rope_style, c.rope_dims, c.rope_base, y);
    }
    return rope_table_default(c.rope_style, c.rope_dims, c.rope_base);
}

namespace {

class LlamaFamily final : public FusedStepModel {
public:
    LlamaFamily(const ModelConfig& config) { config_ = config; }

    Status load(const GgufFile& file) { return load_llama_weights(file, config_, weights_); }

    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) override {
        const ModelConfig& c = config_;
        float* x = nullptr;
        const Batch& batch = gather_and_embed(steps, expert_source, weights_.token_embd, x);
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const LlamaLayer& L = weights_.layers[il];
            attention_block(L.attn, c, x, batch, il, ctx);
            if (L.moe) moe_ffn_block(L.moe_ffn, c, x, batch, ctx);
            else dense_ffn_block(L.ffn, c, x, batch, ctx);
        }
        gathered_.write_logits(x, weights_.output_norm, weights_.output, c, block_slots::kNormed, ctx);
    }

private:
    LlamaWeights weights_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_llama_family(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<LlamaFamily>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
