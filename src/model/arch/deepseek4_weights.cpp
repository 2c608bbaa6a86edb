#include "model/arch/deepseek4_weights.h"

#include <fmt/format.h>

#include <string>

#include "model/weights.h"

namespace strata {

namespace {

void load_mhc(WeightLoader& w, const std::string& prefix, const ModelConfig& c, MhcWeights& out) {
    const int64_t wide = int64_t{c.hc_count} * c.n_embd, mixes = (2 + int64_t{c.hc_count}) * c.hc_count;
    out.fn = w.require(prefix + "fn.weight", {wide, mixes});  // a matmul's weights: F32, or F16 as ds4's files keep it
    out.base = w.require_f32(prefix + "base.weight", {mixes});
    out.scale = w.require_f32(prefix + "scale.weight", {3});
}

void load_compressor(WeightLoader& w, const std::string& prefix, const KvCompressorShape& s, const ModelConfig& c,
                     KvCompressorWeights& out, std::deque<std::vector<float>>& widened) {
    out.wkv = w.require(prefix + "kv.weight", {int64_t{c.n_embd}, s.width()});
    out.wgate = w.require(prefix + "gate.weight", {int64_t{c.n_embd}, s.width()});
    out.ape = w.require_widened_f32(prefix + "ape.weight", {s.width(), s.ratio}, widened);  // F16 in ds4's files
    out.norm = w.require_f32(prefix + "norm.weight", {s.dim});
}

// One block: il < n_layer a trunk block, else an MTP block (sliding only, score-routed).
void load_block(WeightLoader& w, uint32_t il, const ModelConfig& c, Deepseek4Layer& L, std::deque<std::vector<float>>& widened) {
    const std::string b = "blk." + std::to_string(il) + ".";
    const int64_t e = c.n_embd, H = c.n_head, hd = c.head_dim_k, ql = c.q_lora_rank;
    const int64_t groups = c.dsv4.o_groups, lora = c.dsv4.o_lora_rank;
    load_mhc(w, b + "hc_attn_", c, L.hc_attn);
    load_mhc(w, b + "hc_ffn_", c, L.hc_ffn);
    L.attn_norm = w.require_f32(b + "attn_norm.weight", {e});
    CompressedAttentionWeights& a = L.attn;
    a.wq_a = w.require(b + "attn_q_a.weight", {e, ql});
    a.q_a_norm = w.require_f32(b + "attn_q_a_norm.weight", {ql});
    a.wq_b = w.require(b + "attn_q_b.weight", {ql, H * hd});
    a.wkv = w.require(b + "attn_kv.weight", {e, hd});
    a.kv_norm = w.require_f32(b + "attn_kv_a_norm.weight", {hd});
    // Stored as one matrix per file; each group is a slice of its rows (llama.cpp reshapes it
    // the same way, TENSOR_ALLOW_RESHAPE).
    a.wo_a = w.require(b + "attn_output_a.weight", {H * hd / groups, groups * lora});
    if (a.wo_a) a.wo_a.ne[1] = lora, a.wo_a.ne[2] = groups;
    a.wo_b = w.require(b + "attn_output_b.weight", {groups * lora, e});
    a.sinks = w.require_f32(b + "attn_sinks.weight", {H});
    if (il < c.n_layer) {
        const KvCompressorShape shape = dsv4_compressor_shape(c, il), index_shape = dsv4_index_compressor_shape(c, il);
        if (shape.ratio > 0) load_compressor(w, b + "attn_compressor_", shape, c, a.compressor, widened);
        if (index_shape.ratio > 0) {
            load_compressor(w, b + "indexer_compressor_", index_shape, c, a.index_compressor, widened);
            const int64_t ih = c.indexer.n_head, idim = c.indexer.head_dim;
            a.index_wq_b = w.require(b + "indexer.attn_q_b.weight", {ql, ih * idim});
            a.index_proj = w.require(b + "indexer.proj.weight", {e, ih});
        }
    }
    Deepseek4Moe& m = L.moe;
    const int64_t n_exp = c.n_expert, ff = c.n_ff_expert, ff_sh = int64_t{c.n_ff_expert} * c.n_expert_shared;
    m.norm = w.require_f32(b + "ffn_norm.weight", {e});
    m.router = w.require(b + "ffn_gate_inp.weight", {e, n_exp});
    if (il < c.dsv4.n_hash_layers) {
        m.tid2eid = w.require_i32(b + "ffn_gate_tid2eid.weight", {int64_t{c.n_expert_used}, int64_t{c.n_vocab}});
        // The table picks the experts: an id outside them would read past the expert tensors.
        if (m.tid2eid) {
            const auto* ids = reinterpret_cast<const int32_t*>(m.tid2eid.data);
            const int64_t count = int64_t{c.n_expert_used} * c.n_vocab;
            for (int64_t i = 0; i < count; ++i) {
                if (ids[i] < 0 || ids[i] >= n_exp) {
                    w.fail(fmt::format("{}: tensor {}: token {} names expert {}, outside 0..{}", w.path(),
                                       b + "ffn_gate_tid2eid.weight", i / c.n_expert_used, ids[i], n_exp - 1));
                    m.tid2eid = {};
                    break;
                }
            }
        }
    } else {
        m.bias = w.require_f32(b + "exp_probs_b.bias", {n_exp});
    }
    m.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, ff, n_exp});
    m.up_exps = w.require(b + "ffn_up_exps.weight", {e, ff, n_exp});
    m.down_exps = w.require(b + "ffn_down_exps.weight", {ff, e, n_exp});
    m.gate_shexp = w.require(b + "ffn_gate_shexp.weight", {e, ff_sh});
    m.up_shexp = w.require(b + "ffn_up_shexp.weight", {e, ff_sh});
    m.down_shexp = w.require(b + "ffn_down_shexp.weight", {ff_sh, e});
    m.limit = c.dsv4.swiglu_limit[il];
    m.limit_shared = c.dsv4.swiglu_limit_shared[il];
}

}  // namespace

Status load_deepseek4_weights(const GgufFile& file, const ModelConfig& c, Deepseek4Weights& out) {
    const int64_t e = c.n_embd, v = c.n_vocab, wide = int64_t{c.hc_count} * c.n_embd;
    WeightLoader w(file);
    out.token_embd = w.require("token_embd.weight", {e, v});
    out.output_norm = w.require_f32("output_norm.weight", {e});
    out.output = w.require("output.weight", {e, v});
    out.output_hc.fn = w.require("output_hc_fn.weight", {wide, int64_t{c.hc_count}});
    out.output_hc.base = w.require_f32("output_hc_base.weight", {int64_t{c.hc_count}});
    out.output_hc.scale = w.require_f32("output_hc_scale.weight", {1});
    out.layers.resize(c.n_layer);
    for (uint32_t il = 0; il < c.n_layer; ++il) load_block(w, il, c, out.layers[il], out.widened);
    out.mtp.resize(c.n_mtp_layers);
    for (uint32_t i = 0; i < c.n_mtp_layers; ++i) {
        const uint32_t il = c.n_layer + i;
        const std::string b = "blk." + std::to_string(il) + ".";
        Deepseek4Mtp& m = out.mtp[i];
        load_block(w, il, c, m.block, out.widened);
        m.eh_proj = w.require(b + "nextn.eh_proj.weight", {2 * e, e});
        m.enorm = w.require_f32(b + "nextn.enorm.weight", {e});
        m.hnorm = w.require_f32(b + "nextn.hnorm.weight", {e});
        m.embed_tokens = w.optional(b + "nextn.embed_tokens.weight", {e, v});
        m.shared_head_head = w.optional(b + "nextn.shared_head_head.weight", {e, v});
        m.shared_head_norm = w.optional_f32(b + "nextn.shared_head_norm.weight", {e});
    }
    return w.status();
}

}  // namespace strata
