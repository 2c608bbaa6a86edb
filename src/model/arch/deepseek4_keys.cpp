// deepseek4's metadata (NEW_ARCHS.md §B2; the key names are llama.cpp's, LD `deepseek4.cpp`
// load_arch_hparams). Every key the recipe reads is required: the converter writes them all, and
// a default would silently run another model.
#include "model/arch/deepseek4_keys.h"

#include <vector>

namespace strata {

namespace {

// The gating function llama.cpp's converter writes for scoring_func "sqrtsoftplus".
constexpr uint64_t kGatingSqrtSoftplus = 4;

struct KeyReader {
    const GgufFile& f;
    const std::string& p;

    Result<const GgufValue*> value(const std::string& key) const {
        const GgufValue* v = f.find(p + key);
        if (v == nullptr) return Status::error("{}: {}{} is missing", f.path(), p, key);
        return v;
    }
    Status present(const std::string& key) const {
        if (f.find(p + key) == nullptr) return Status::error("{}: {}{} is missing", f.path(), p, key);
        return Status::ok();
    }
    Status size(const std::string& key, uint32_t& out, uint64_t max = uint64_t{1} << 30) const {
        STRATA_ASSIGN_OR_RETURN(const GgufValue* v, value(key));
        if (!v->is_integer() || v->as_uint() == 0 || v->as_uint() > max) {
            return Status::error("{}: {}{}: expected a positive integer up to {}", f.path(), p, key, max);
        }
        out = static_cast<uint32_t>(v->as_uint());
        return Status::ok();
    }
    Status number(const std::string& key, float& out) const {
        STRATA_ASSIGN_OR_RETURN(const GgufValue* v, value(key));
        if (!v->is_float() && !v->is_integer()) return Status::error("{}: {}{}: expected a number", f.path(), p, key);
        out = static_cast<float>(v->as_float());
        return Status::ok();
    }
    // A per-block list: an array of at least `n` numbers, or one number for every block.
    Status per_block(const std::string& key, uint32_t n, std::vector<float>& out) const {
        STRATA_ASSIGN_OR_RETURN(const GgufValue* v, value(key));
        out.clear();
        if (v->is_array()) {
            for (const GgufValue& item : v->as_array().items) {
                if (!item.is_float() && !item.is_integer()) break;
                out.push_back(static_cast<float>(item.as_float()));
            }
        } else if (v->is_float() || v->is_integer()) {
            out.assign(n, static_cast<float>(v->as_float()));
        }
        if (out.size() < n) {
            return Status::error("{}: {}{}: expected a number per block ({}), got {}", f.path(), p, key, n, out.size());
        }
        return Status::ok();
    }
};

Status read_compress_ratios(const KeyReader& k, ModelConfig& c) {
    const uint32_t blocks = c.n_layer + c.n_mtp_layers;
    STRATA_ASSIGN_OR_RETURN(const GgufValue* v, k.value("attention.compress_ratios"));
    std::vector<uint64_t> ratios;
    if (v->is_array()) {
        for (const GgufValue& item : v->as_array().items) {
            if (!item.is_integer()) break;
            ratios.push_back(item.as_uint());
        }
    }
    // llama.cpp requires a ratio for every block, the MTP blocks included (they slide only).
    if (ratios.size() < c.n_layer) {
        return Status::error("{}: {}attention.compress_ratios: expected an integer per block ({}), got {}", k.f.path(),
                             k.p, c.n_layer, ratios.size());
    }
    c.indexer.compress_ratio.assign(blocks, 0);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        // The only ratios the model was trained with (and llama.cpp hard-codes): 0 sliding only,
        // 4 the overlapped compressor with the indexer (CSA), 128 the heavy one (HCA).
        if (ratios[il] != 0 && ratios[il] != 4 && ratios[il] != 128) {
            return Status::error("{}: {}attention.compress_ratios[{}] = {}: supported ratios are 0, 4 and 128", k.f.path(),
                                 k.p, il, ratios[il]);
        }
        c.indexer.compress_ratio[il] = static_cast<uint32_t>(ratios[il]);
    }
    return Status::ok();
}

}  // namespace

Status read_deepseek4_keys(const GgufFile& f, const std::string& p, ModelConfig& c) {
    const KeyReader k{f, p};
    c.n_mtp_layers = static_cast<uint32_t>(f.get_uint(p + "nextn_predict_layers", 0));
    if (c.n_mtp_layers >= c.n_layer) {
        return Status::error("{}: {}nextn_predict_layers ({}) leaves no trunk of block_count {}", f.path(), p,
                             c.n_mtp_layers, c.n_layer);
    }
    c.n_layer -= c.n_mtp_layers;  // the trunk; the MTP blocks follow it

    // The common keys ModelConfig::from_gguf reads with defaults: required here.
    for (const char* key : {"attention.key_length", "attention.value_length", "rope.dimension_count", "rope.freq_base",
                            "attention.layer_norm_rms_epsilon", "expert_count", "expert_used_count",
                            "expert_feed_forward_length"}) {
        STRATA_TRY(k.present(key));
    }
    STRATA_TRY(k.size("attention.q_lora_rank", c.q_lora_rank));
    STRATA_TRY(k.size("attention.sliding_window", c.sliding_window));
    STRATA_TRY(k.size("expert_shared_count", c.n_expert_shared, 64));
    STRATA_TRY(k.number("expert_weights_scale", c.expert_weights_scale));
    STRATA_TRY(k.present("expert_weights_norm"));
    c.norm_topk_prob = f.get_bool(p + "expert_weights_norm", true);
    uint32_t gating = 0;
    STRATA_TRY(k.size("expert_gating_func", gating, 16));
    if (gating != kGatingSqrtSoftplus) {
        return Status::error("{}: {}expert_gating_func = {}: deepseek4 scores experts by sqrt(softplus) ({})", f.path(),
                             p, gating, kGatingSqrtSoftplus);
    }
    c.expert_gating_func = gating;
    Deepseek4Config& d = c.dsv4;
    const uint32_t blocks = c.n_layer + c.n_mtp_layers;
    STRATA_TRY(k.per_block("swiglu_clamp_exp", blocks, d.swiglu_limit));
    STRATA_TRY(k.per_block("swiglu_clamp_shexp", blocks, d.swiglu_limit_shared));

    STRATA_TRY(k.size("attention.indexer.head_count", c.indexer.n_head));
    STRATA_TRY(k.size("attention.indexer.key_length", c.indexer.head_dim));
    STRATA_TRY(k.size("attention.indexer.top_k", c.indexer.top_k));
    STRATA_TRY(k.size("attention.output_group_count", d.o_groups));
    STRATA_TRY(k.size("attention.output_lora_rank", d.o_lora_rank));
    STRATA_TRY(read_compress_ratios(k, c));
    STRATA_TRY(k.number("attention.compress_rope_freq_base", d.compress_rope_base));
    STRATA_TRY(k.size("hyper_connection.count", c.hc_count, 64));
    STRATA_TRY(k.size("hyper_connection.sinkhorn_iterations", d.sinkhorn_iters, 1000));
    STRATA_TRY(k.number("hyper_connection.epsilon", d.hc_eps));
    STRATA_ASSIGN_OR_RETURN(const GgufValue* hash, k.value("hash_layer_count"));
    if (!hash->is_integer() || hash->as_uint() > c.n_layer) {
        return Status::error("{}: {}hash_layer_count: expected 0..{}", f.path(), p, c.n_layer);
    }
    d.n_hash_layers = static_cast<uint32_t>(hash->as_uint());
    uint32_t embd_out = 0;
    STRATA_TRY(k.size("embedding_length_out", embd_out));
    if (embd_out != c.hc_count * c.n_embd) {
        return Status::error("{}: {}embedding_length_out = {}: expected hyper_connection.count × embedding_length = {}",
                             f.path(), p, embd_out, c.hc_count * c.n_embd);
    }

    // YaRN on the compressed layers' rope (the sliding layers' rope is plain).
    STRATA_ASSIGN_OR_RETURN(const GgufValue* scaling, k.value("rope.scaling.type"));
    c.rope_yarn = scaling->is_string() && scaling->as_string() == "yarn";
    if (c.rope_yarn) {
        STRATA_TRY(k.number("rope.scaling.factor", c.rope_scaling_factor));
        STRATA_TRY(k.size("rope.scaling.original_context_length", c.rope_orig_ctx));
        STRATA_TRY(k.number("rope.scaling.yarn_beta_fast", c.yarn_beta_fast));
        STRATA_TRY(k.number("rope.scaling.yarn_beta_slow", c.yarn_beta_slow));
    }

    // Shapes the recipe relies on: one shared K=V head, heads that fill the output groups, the
    // rope on the last dims of the attention and the indexer heads.
    if (c.n_head_kv != 1) {
        return Status::error("{}: {}attention.head_count_kv = {}: deepseek4 has one shared K=V head", f.path(), p,
                             c.n_head_kv);
    }
    if (c.head_dim_k != c.head_dim_v) {
        return Status::error("{}: {}attention.key_length ({}) and value_length ({}) differ; deepseek4's K is its V",
                             f.path(), p, c.head_dim_k, c.head_dim_v);
    }
    if (c.n_head % d.o_groups != 0) {
        return Status::error("{}: {}attention.output_group_count ({}) does not divide head_count ({})", f.path(), p,
                             d.o_groups, c.n_head);
    }
    if (c.rope_dims > c.indexer.head_dim) {
        return Status::error("{}: {}attention.indexer.key_length ({}) is below rope.dimension_count ({})", f.path(), p,
                             c.indexer.head_dim, c.rope_dims);
    }
    if (c.n_expert_used > c.n_expert || c.n_expert == 0) {
        return Status::error("{}: {}expert_used_count ({}) / expert_count ({})", f.path(), p, c.n_expert_used,
                             c.n_expert);
    }
    return Status::ok();
}

}  // namespace strata
