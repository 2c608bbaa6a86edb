#include "model/arch/qwen3next_weights.h"

#include <string>

namespace strata {

void load_gated_delta_net_weights(WeightLoader& w, const std::string& b, const ModelConfig& c, bool fused_beta_alpha,
                                  GatedDeltaNetWeights& d) {
    const int64_t e = c.n_embd, n_v = c.ssm_dt_rank, d_k = c.ssm_d_state;
    const int64_t key_dim = c.ssm_n_group * d_k, value_dim = c.ssm_d_inner, d_v = value_dim / n_v;
    const int64_t conv_ch = 2 * key_dim + value_dim;
    d.wqkv = w.require(b + "attn_qkv.weight", {e, conv_ch});
    d.wz = w.require(b + "attn_gate.weight", {e, value_dim});
    if (fused_beta_alpha) {
        d.wba = w.require(b + "ssm_ba.weight", {e, 2 * n_v});
        d.v_order = VHeadOrder::Grouped;
    } else {
        d.wbeta = w.require(b + "ssm_beta.weight", {e, n_v});
        d.walpha = w.require(b + "ssm_alpha.weight", {e, n_v});
        d.v_order = VHeadOrder::Tiled;
    }
    d.conv = w.require_f32(b + "ssm_conv1d.weight", {c.ssm_conv_kernel, conv_ch});
    d.dt_bias = w.require_f32(b + "ssm_dt.bias", {n_v});
    d.a = w.require_f32(b + "ssm_a", {n_v});
    d.ssm_norm = w.require_f32(b + "ssm_norm.weight", {d_v});
    d.wout = w.require(b + "ssm_out.weight", {value_dim, e});
}

void load_gated_attention_weights(WeightLoader& w, const std::string& b, const ModelConfig& c, GatedAttentionWeights& a) {
    const int64_t e = c.n_embd;
    a.wq = w.require(b + "attn_q.weight", {e, 2 * c.q_dim()});
    a.wk = w.require(b + "attn_k.weight", {e, c.kv_dim_k()});
    a.wv = w.require(b + "attn_v.weight", {e, c.kv_dim_v()});
    a.q_norm = w.require_f32(b + "attn_q_norm.weight", {c.head_dim_k});
    a.k_norm = w.require_f32(b + "attn_k_norm.weight", {c.head_dim_k});
    a.wo = w.require(b + "attn_output.weight", {c.n_head * c.head_dim_v, e});
}

void load_moe_with_shared_expert(WeightLoader& w, const std::string& b, const ModelConfig& c, MoeFfnWeights& moe,
                                 SharedExpertWeights& shared) {
    const int64_t e = c.n_embd, ff = c.n_ff_expert, n_exp = c.n_expert, ff_sh = c.n_ff_shared_expert;
    moe.router = w.require(b + "ffn_gate_inp.weight", {e, n_exp});
    moe.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, ff, n_exp});
    moe.up_exps = w.require(b + "ffn_up_exps.weight", {e, ff, n_exp});
    moe.down_exps = w.require(b + "ffn_down_exps.weight", {ff, e, n_exp});
    shared.gate = w.require(b + "ffn_gate_shexp.weight", {e, ff_sh});
    shared.up = w.require(b + "ffn_up_shexp.weight", {e, ff_sh});
    shared.down = w.require(b + "ffn_down_shexp.weight", {ff_sh, e});
    shared.gate_inp = w.require(b + "ffn_gate_inp_shexp.weight", {e});
}

Status check_hybrid_shapes(const GgufFile& file, const ModelConfig& c) {
    if (!c.is_moe()) return Status::error("{}: {} expects expert_count > 0", file.path(), c.arch_name());
    if (c.head_dim_v != c.head_dim_k) {
        return Status::error("{}: {}: expected value_length == key_length (the output gate spans both), got {} and {}",
                             file.path(), c.arch_name(), c.head_dim_v, c.head_dim_k);
    }
    return Status::ok();
}

Status load_hybrid_weights(const GgufFile& file, const ModelConfig& c, HybridWeights& out) {
    STRATA_TRY(check_hybrid_shapes(file, c));
    const int64_t e = c.n_embd, v = c.n_vocab;
    WeightLoader w(file);
    w.embedding_and_head(e, v, out.token_embd, out.output_norm, out.output);
    out.layers.resize(c.n_layer);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        HybridLayer& L = out.layers[il];
        L.recurrent = c.is_recurrent_layer(il);
        const Weight attn_norm = w.require_f32(b + "attn_norm.weight", {e});
        if (L.recurrent) {
            L.delta.norm = attn_norm;
            load_gated_delta_net_weights(w, b, c, c.arch == Arch::Qwen3Next, L.delta);
        } else {
            L.attn.norm = attn_norm;
            load_gated_attention_weights(w, b, c, L.attn);
        }
        L.moe.norm = w.require_f32(b + "post_attention_norm.weight", {e});
        load_moe_with_shared_expert(w, b, c, L.moe, L.shared);
    }
    return w.status();
}

}  // namespace strata
