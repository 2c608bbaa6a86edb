#include "model/arch/deepseek2_weights.h"

#include <cmath>
#include <string>

namespace strata {

namespace {

// The file must be in the absorbed-MLA layout the blocks compute with.
Status check_config(const GgufFile& file, const ModelConfig& c) {
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

}  // namespace

Status load_deepseek2_weights(const GgufFile& file, const ModelConfig& c, Deepseek2Weights& out) {
    STRATA_TRY(check_config(file, c));
    const int64_t e = c.n_embd, v = c.n_vocab, n_head = c.n_head;
    const int64_t lora = c.kv_lora_rank, r = c.rope_dims, dk = c.head_dim_k_mla, dv = c.head_dim_v_mla;
    WeightLoader w(file);
    w.embedding_and_head(e, v, out.token_embd, out.output_norm, out.output);
    out.layers.resize(c.n_layer);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        Deepseek2Layer& L = out.layers[il];
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
        MoeFfnWeights& m = L.moe_ffn;
        const int64_t ff = c.n_ff_expert, n_exp = c.n_expert, ff_sh = ff * c.n_expert_shared;
        m.norm = w.require_f32(b + "ffn_norm.weight", {e});
        m.router = w.require(b + "ffn_gate_inp.weight", {e, n_exp});
        L.router_bias = w.optional_f32(b + "exp_probs_b.bias", {n_exp});
        m.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, ff, n_exp});
        m.up_exps = w.require(b + "ffn_up_exps.weight", {e, ff, n_exp});
        m.down_exps = w.require(b + "ffn_down_exps.weight", {ff, e, n_exp});
        if (ff_sh > 0) {
            L.gate_sh = w.require(b + "ffn_gate_shexp.weight", {e, ff_sh});
            L.up_sh = w.require(b + "ffn_up_shexp.weight", {e, ff_sh});
            L.down_sh = w.require(b + "ffn_down_shexp.weight", {ff_sh, e});
        }
    }
    return w.status();
}

// YaRN (long-context checkpoints): the frequencies are rescaled, and the softmax scale grows by
// mscale² with mscale = 1 + yarn_log_multiplier · ln(factor) (HF: mscale_all_dim). The cos/sin
// magnitude stays 1: HF's attention_factor is mscale / mscale_all_dim, and published DeepSeek
// configs set the two equal (GGUF keeps only the latter).
MlaRope deepseek2_rope(const ModelConfig& c) {
    MlaRope out;
    const int64_t r = c.rope_dims;
    out.kq_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim_k_mla));
    if (c.rope_yarn && c.rope_scaling_factor > 1.0f) {
        YarnParams y{c.rope_scaling_factor, c.rope_orig_ctx, c.yarn_beta_fast, c.yarn_beta_slow, 1.0f, true};
        out.table = rope_table_yarn(c.rope_style, r, c.rope_base, y);
        const float mscale = 1.0f + c.yarn_log_multiplier * std::log(c.rope_scaling_factor);
        out.kq_scale *= mscale * mscale;
    } else {
        out.table = rope_table_default(c.rope_style, r, c.rope_base);
    }
    return out;
}

GroupedRouting deepseek2_routing(const ModelConfig& c, const float* selection_bias) {
    GroupedRouting rp;
    rp.n_expert = c.n_expert;
    rp.n_used = c.n_expert_used;
    rp.n_group = c.n_expert_group;
    rp.n_group_used = c.n_expert_group_used;
    rp.sigmoid = c.expert_gating_func != 1;  // absent key: V3's sigmoid, as llama.cpp assumes
    rp.selection_bias = selection_bias;
    rp.normalize = c.norm_topk_prob;
    rp.scale = c.expert_weights_scale;
    return rp;
}

}  // namespace strata
