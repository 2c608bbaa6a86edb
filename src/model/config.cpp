#include "model/config.h"

#include "model/architecture.h"

namespace strata {

Result<ModelConfig> ModelConfig::from_gguf(const GgufFile& f) {
    ModelConfig c;
    STRATA_ASSIGN_OR_RETURN(std::string name, f.require_string("general.architecture"));
    const ArchitectureInfo* info = find_architecture(name);
    if (info == nullptr) {
        return Status::error("{}: architecture \"{}\" is not supported yet (supported: {})", f.path(), name,
                             architecture_names());
    }
    c.arch = info->id;
    const std::string p = name + ".";
    auto req = [&](const char* key, uint32_t* out) -> Status {
        STRATA_ASSIGN_OR_RETURN(uint64_t v, f.require_uint(p + key));
        if (v == 0 || v > (1u << 30)) return Status::error("{}: {}{}: expected a positive size, got {}", f.path(), p, key, v);
        *out = static_cast<uint32_t>(v);
        return Status::ok();
    };
    STRATA_TRY(req("block_count", &c.n_layer));
    STRATA_TRY(req("embedding_length", &c.n_embd));
    STRATA_TRY(req("attention.head_count", &c.n_head));
    c.n_head_kv = static_cast<uint32_t>(f.get_uint(p + "attention.head_count_kv", c.n_head));
    c.n_ctx_train = static_cast<uint32_t>(f.get_uint(p + "context_length", 4096));
    c.head_dim_k = static_cast<uint32_t>(f.get_uint(p + "attention.key_length", c.n_embd / c.n_head));
    c.head_dim_v = static_cast<uint32_t>(f.get_uint(p + "attention.value_length", c.head_dim_k));
    c.n_ff = static_cast<uint32_t>(f.get_uint(p + "feed_forward_length", 0));
    c.rms_eps = static_cast<float>(f.get_float(p + "attention.layer_norm_rms_epsilon", 1e-5));
    c.rope_base = static_cast<float>(f.get_float(p + "rope.freq_base", 10000.0));
    c.rope_dims = static_cast<uint32_t>(f.get_uint(p + "rope.dimension_count", c.head_dim_k));
    c.n_expert = static_cast<uint32_t>(f.get_uint(p + "expert_count", 0));
    c.n_expert_used = static_cast<uint32_t>(f.get_uint(p + "expert_used_count", 0));
    c.n_ff_expert = static_cast<uint32_t>(f.get_uint(p + "expert_feed_forward_length", c.n_ff));

    // Vocabulary size: the key when present, else the token list's length.
    c.n_vocab = static_cast<uint32_t>(f.get_uint(p + "vocab_size", 0));
    if (c.n_vocab == 0) {
        if (const GgufValue* tokens = f.find("tokenizer.ggml.tokens"); tokens && tokens->is_array()) {
            c.n_vocab = static_cast<uint32_t>(tokens->as_array().items.size());
        }
    }

    c.rope_style = info->rope_style;
    if (info->read_keys != nullptr) STRATA_TRY(info->read_keys(f, p, c));

    if (c.n_head % c.n_head_kv != 0) {
        return Status::error("{}: expected head_count ({}) to be a multiple of head_count_kv ({})", f.path(), c.n_head,
                             c.n_head_kv);
    }
    if (c.rope_dims > c.head_dim_k || c.rope_dims % 2 != 0) {
        return Status::error("{}: rope.dimension_count: expected an even number <= key_length {}, got {}", f.path(),
                             c.head_dim_k, c.rope_dims);
    }
    if (c.n_expert > 0 && (c.n_expert_used == 0 || c.n_expert_used > c.n_expert)) {
        return Status::error("{}: expert_used_count: expected 1..{}, got {}", f.path(), c.n_expert, c.n_expert_used);
    }
    return c;
}

}  // namespace strata
