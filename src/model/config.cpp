#include "model/config.h"

#include <algorithm>

namespace strata {

const std::vector<std::string>& supported_architectures() {
    static const std::vector<std::string> archs = {"llama", "qwen3", "qwen3moe"};
    return archs;
}

Result<ModelConfig> ModelConfig::from_gguf(const GgufFile& f) {
    ModelConfig c;
    STRATA_ASSIGN_OR_RETURN(c.arch, f.require_string("general.architecture"));
    const auto& archs = supported_architectures();
    if (std::find(archs.begin(), archs.end(), c.arch) == archs.end()) {
        std::string list;
        for (const auto& a : archs) list += (list.empty() ? "" : ", ") + a;
        return Status::error("{}: architecture \"{}\" is not supported yet (supported: {})", f.path(), c.arch, list);
    }
    const std::string p = c.arch + ".";
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

    // Rope layout per architecture, as the converters arrange the q/k weights (llama.cpp's
    // LLAMA_ROPE_TYPE_NORM for llama, NEOX for the Qwen family).
    c.rope_style = (c.arch == "llama") ? RopeStyle::Normal : RopeStyle::Neox;

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
