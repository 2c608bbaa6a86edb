#include "model/arch/qwen4exp_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "model/arch/qwen3next_weights.h"
#include "model/weights.h"

namespace strata {

namespace {

void load_hyper_connection(WeightLoader& w, const std::string& prefix, const ModelConfig& c, bool inject,
                           HyperConnectionWeights& out) {
    const int64_t wide = int64_t{c.hc_count} * c.n_embd, r = c.hc_lowrank;
    out.norm = w.require_f32(prefix + "norm.weight", {wide});
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

}  // namespace

Status load_qwen4exp_weights(const GgufFile& file, const ModelConfig& c, Qwen4ExpWeights& out) {
    STRATA_TRY(check_hybrid_shapes(file, c));
    const int64_t e = c.n_embd, v = c.n_vocab;
    WeightLoader w(file);
    out.token_embd = w.require("token_embd.weight", {e, v});
    out.output = w.optional("output.weight", {e, v});
    if (!out.output) out.output = out.token_embd;
    load_hyper_connection(w, "output_hc_", c, false, out.output_hc);
    out.layers.resize(c.n_layer);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        Qwen4ExpLayer& L = out.layers[il];
        L.recurrent = c.is_recurrent_layer(il);
        load_hyper_connection(w, b + "hc_attn_", c, true, L.hc_attn);
        load_hyper_connection(w, b + "hc_ffn_", c, true, L.hc_ffn);
        if (L.recurrent) {
            load_gated_delta_net_weights(w, b, c, false, L.delta);
            L.delta.output_gate = NormGate::Sigmoid;
        } else {
            load_gated_attention_weights(w, b, c, L.attn);
            if (c.indexer.ratio(il) > 0) load_indexer(w, b, c, L.attn.indexer);
        }
        L.has_ple = c.ple.layer == static_cast<int32_t>(il);
        if (L.has_ple) load_ple(w, file, b, c, L.ple);
        load_moe_with_shared_expert(w, b, c, L.moe, L.shared);
    }
    return w.status();
}

}  // namespace strata
