#include "model/arch/qwen4exp_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "model/arch/qwen3next_weights.h"
#include "model/weights.h"

namespace strata {

namespace {

// A gamma over the hc streams: {hc·n_embd}, or {n_embd, hc} as some forks write it (llama.cpp
// loads both with TENSOR_ALLOW_RESHAPE; NEW_ARCHS.md §A2.2), viewed as the flat vector.
Weight require_wide_norm(WeightLoader& w, const GgufFile& file, const std::string& name, const ModelConfig& c) {
    const int64_t wide = int64_t{c.hc_count} * c.n_embd;
    const GgufTensorInfo* t = file.tensor(name);
    if (t == nullptr || t->n_dims != 2 || t->ne[0] != c.n_embd || t->ne[1] != c.hc_count) {
        return w.require_f32(name, {wide});
    }
    Weight v = w.require_f32(name, {int64_t{c.n_embd}, int64_t{c.hc_count}});
    if (v) {
        v.ne[0] = wide, v.ne[1] = 1;
        v.row_bytes = static_cast<uint64_t>(wide) * sizeof(float);
    }
    return v;
}

void load_hyper_connection(WeightLoader& w, const GgufFile& file, const std::string& prefix, const ModelConfig& c,
                           bool inject, HyperConnectionWeights& out) {
    const int64_t wide = int64_t{c.hc_count} * c.n_embd, r = c.hc_lowrank;
    out.norm = require_wide_norm(w, file, prefix + "norm.weight", c);
    out.down = w.require(prefix + "down.weight", {wide, r});
    out.up = w.require(prefix + "up.weight", {r, wide});
    if (inject) out.inject = w.require(prefix + "inject.weight", {wide, int64_t{c.hc_count}});
}

void load_ple(WeightLoader& w, const GgufFile& file, const std::string& b, const ModelConfig& c, PleWeights& out) {
    const PleConfig& ple = c.ple;
    const int64_t wide = int64_t{c.hc_count} * c.n_embd, width = int64_t{ple.n_heads()} * ple.row_width;
    // The table's rows: every head's offset + modulus must fit (the converter pads to a multiple).
    uint64_t rows_needed = 0;
    for (size_t h = 0; h < ple.head_sizes.size(); ++h) rows_needed = std::max(rows_needed, ple.head_offsets[h] + ple.head_sizes[h]);
    const GgufTensorInfo* table = file.tensor("per_layer_token_embd.weight");
    const int64_t rows = table != nullptr && table->n_dims == 2 ? static_cast<int64_t>(table->ne[1])
                                                                : static_cast<int64_t>(rows_needed);
    out.table = w.require("per_layer_token_embd.weight", {int64_t{ple.row_width}, rows});
    if (out.table && static_cast<uint64_t>(rows) < rows_needed) {
        out.table = {};
        w.fail(fmt::format("{}: tensor per_layer_token_embd.weight has {} rows; the PLE heads (ple.head_offsets + "
                           "ple.head_vocab_sizes) address {}",
                           file.path(), rows, rows_needed));
    }
    out.key = w.require(b + "ple_key.weight", {width, wide});
    out.value = w.require(b + "ple_value.weight", {width, int64_t{c.n_embd}});
    out.norm_key = w.require_f32(b + "ple_norm_key.weight", {wide});
    out.norm_query = w.require_f32(b + "ple_norm_query.weight", {wide});
    out.norm_conv = w.require_f32(b + "ple_norm_conv.weight", {wide});
    out.conv = w.require_f32(b + "ple_conv1d.weight", {int64_t{ple.conv_kernel}, wide});
}

void load_indexer(WeightLoader& w, const std::string& b, const ModelConfig& c, QsaIndexerWeights& out) {
    const int64_t e = c.n_embd, d = c.indexer.head_dim;
    out.wq = w.require(b + "indexer.q_proj.weight", {e, int64_t{c.indexer.n_head} * d});
    out.wk = w.require(b + "indexer.k_proj.weight", {e, d});
    out.q_norm = w.require_f32(b + "indexer.q_norm.weight", {d});
    out.k_norm = w.require_f32(b + "indexer.k_norm.weight", {d});
}

// Rows [half·n_ff, (half+1)·n_ff) of every expert of a fused {n_embd, 2·n_ff, n_expert} tensor,
// copied into one contiguous stack: the MoE block and the expert tiers address an expert as
// n_ff consecutive rows.
Weight expert_half(const Weight& fused, int64_t half, std::vector<std::shared_ptr<const std::vector<uint8_t>>>& owned) {
    const int64_t ff = fused.ne[1] / 2, n_exp = fused.ne[2];
    const uint64_t half_bytes = static_cast<uint64_t>(ff) * fused.row_bytes;
    auto bytes = std::make_shared<std::vector<uint8_t>>(half_bytes * static_cast<uint64_t>(n_exp));
    for (int64_t e = 0; e < n_exp; ++e) {
        std::memcpy(bytes->data() + static_cast<uint64_t>(e) * half_bytes,
                    fused.data + static_cast<uint64_t>(2 * e + half) * half_bytes, half_bytes);
    }
    Weight w = fused;
    w.data = bytes->data();
    w.ne[1] = ff;
    owned.push_back(std::move(bytes));
    return w;
}

void load_fused_moe(WeightLoader& w, const std::string& b, const ModelConfig& c, Qwen4ExpLayer& L,
                    std::vector<std::shared_ptr<const std::vector<uint8_t>>>& owned) {
    const int64_t e = c.n_embd, ff = c.n_ff_expert, n_exp = c.n_expert, ff_sh = c.n_ff_shared_expert;
    const Weight fused = w.require(b + "ffn_gate_up_exps.weight", {e, 2 * ff, n_exp});
    if (fused) {
        L.moe.gate_exps = expert_half(fused, 0, owned);
        L.moe.up_exps = expert_half(fused, 1, owned);
    }
    L.moe.router = w.require(b + "ffn_gate_inp.weight", {e, n_exp});
    L.moe.down_exps = w.require(b + "ffn_down_exps.weight", {ff, e, n_exp});
    L.shared.gate = w.require(b + "ffn_gate_shexp.weight", {e, ff_sh});
    L.shared.up = w.require(b + "ffn_up_shexp.weight", {e, ff_sh});
    L.shared.down = w.require(b + "ffn_down_shexp.weight", {ff_sh, e});
    L.shared.gate_inp = w.require(b + "ffn_gate_inp_shexp.weight", {e});
}

}  // namespace

Status load_qwen4exp_weights(const GgufFile& file, const ModelConfig& c, Qwen4ExpWeights& out) {
    STRATA_TRY(check_hybrid_shapes(file, c));
    const int64_t e = c.n_embd, v = c.n_vocab;
    WeightLoader w(file);
    out.token_embd = w.require("token_embd.weight", {e, v});
    out.output = w.optional("output.weight", {e, v});
    if (!out.output) out.output = out.token_embd;
    load_hyper_connection(w, file, "output_hc_", c, false, out.output_hc);
    out.layers.resize(c.n_layer);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        Qwen4ExpLayer& L = out.layers[il];
        L.recurrent = c.is_recurrent_layer(il);
        load_hyper_connection(w, file, b + "hc_attn_", c, true, L.hc_attn);
        load_hyper_connection(w, file, b + "hc_ffn_", c, true, L.hc_ffn);
        if (L.recurrent) {
            load_gated_delta_net_weights(w, b, c, false, L.delta);
            L.delta.output_gate = NormGate::Sigmoid;
        } else {
            load_gated_attention_weights(w, b, c, L.attn);
            if (c.indexer.ratio(il) > 0) load_indexer(w, b, c, L.attn.indexer);
        }
        L.has_ple = c.ple.layer == static_cast<int32_t>(il);
        if (L.has_ple) load_ple(w, file, b, c, L.ple);
        if (file.tensor(b + "ffn_gate_up_exps.weight") != nullptr) {
            load_fused_moe(w, b, c, L, out.owned);
        } else {
            load_moe_with_shared_expert(w, b, c, L.moe, L.shared);
        }
    }
    return w.status();
}

}  // namespace strata
