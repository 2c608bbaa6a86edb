#include "model/config.h"

#include <algorithm>

namespace strata {

const std::vector<std::string>& supported_architectures() {
    static const std::vector<std::string> archs = {"llama", "qwen3", "qwen3moe", "deepseek2", "gpt-oss",
                                                   "qwen3next", "qwen35moe"};
    return archs;
}

namespace {
// Keys of deepseek2 and gpt-oss; absent keys keep the defaults of config.h.
void read_deepseek2_gptoss_keys(const GgufFile& f, const std::string& p, ModelConfig& c) {
    c.q_lora_rank = static_cast<uint32_t>(f.get_uint(p + "attention.q_lora_rank", 0));
    c.kv_lora_rank = static_cast<uint32_t>(f.get_uint(p + "attention.kv_lora_rank", 0));
    c.head_dim_k_mla = static_cast<uint32_t>(f.get_uint(p + "attention.key_length_mla", 0));
    c.head_dim_v_mla = static_cast<uint32_t>(f.get_uint(p + "attention.value_length_mla", 0));
    c.n_leading_dense = static_cast<uint32_t>(f.get_uint(p + "leading_dense_block_count", 0));
    c.n_expert_shared = static_cast<uint32_t>(f.get_uint(p + "expert_shared_count", 0));
    c.n_expert_group = static_cast<uint32_t>(f.get_uint(p + "expert_group_count", 1));
    c.n_expert_group_used = static_cast<uint32_t>(f.get_uint(p + "expert_group_used_count", 1));
    c.expert_weights_scale = static_cast<float>(f.get_float(p + "expert_weights_scale", 1.0));
    c.expert_gating_func = static_cast<uint32_t>(f.get_uint(p + "expert_gating_func", 0));
    c.sliding_window = static_cast<uint32_t>(f.get_uint(p + "attention.sliding_window", 0));
    c.rope_yarn = f.get_string(p + "rope.scaling.type", "none") == "yarn";
    c.rope_scaling_factor = static_cast<float>(f.get_float(p + "rope.scaling.factor", 1.0));
    c.rope_orig_ctx = static_cast<uint32_t>(f.get_uint(p + "rope.scaling.original_context_length", c.n_ctx_train));
    c.yarn_beta_fast = static_cast<float>(f.get_float(p + "rope.scaling.yarn_beta_fast", 32.0));
    c.yarn_beta_slow = static_cast<float>(f.get_float(p + "rope.scaling.yarn_beta_slow", 1.0));
    c.yarn_log_multiplier = static_cast<float>(f.get_float(p + "rope.scaling.yarn_log_multiplier", 0.0));
    if (c.arch == "deepseek2") {
        // llama.cpp's converter writes the flag only when the checkpoint normalizes.
        c.norm_topk_prob = f.get_bool(p + "expert_weights_norm", false);
        c.rope_style = RopeStyle::Normal;  // HF's rope_interleave pairs neighbours
    }
}
}  // namespace

namespace {
// Keys of qwen3next and qwen35moe (hybrid DeltaNet stacks).
Status read_qwen3next_keys(const GgufFile& f, const std::string& p, ModelConfig& c) {
    c.ssm_conv_kernel = static_cast<uint32_t>(f.get_uint(p + "ssm.conv_kernel", 0));
    c.ssm_d_state = static_cast<uint32_t>(f.get_uint(p + "ssm.state_size", 0));
    c.ssm_n_group = static_cast<uint32_t>(f.get_uint(p + "ssm.group_count", 0));
    c.ssm_dt_rank = static_cast<uint32_t>(f.get_uint(p + "ssm.time_step_rank", 0));
    c.ssm_d_inner = static_cast<uint32_t>(f.get_uint(p + "ssm.inner_size", 0));
    c.full_attention_interval = static_cast<uint32_t>(f.get_uint(p + "full_attention_interval", 4));
    c.n_ff_shared_expert = static_cast<uint32_t>(f.get_uint(p + "expert_shared_feed_forward_length", c.n_ff));
    if (c.ssm_conv_kernel < 1 || c.ssm_d_state == 0 || c.ssm_n_group == 0 || c.ssm_dt_rank == 0 ||
        c.ssm_dt_rank % c.ssm_n_group != 0 || c.ssm_d_inner % c.ssm_dt_rank != 0) {
        return Status::error("{}: {}ssm.*: expected conv_kernel >= 1, time_step_rank a multiple of group_count and "
                             "inner_size a multiple of time_step_rank, got {}, {}, {}, {}",
                             f.path(), p, c.ssm_conv_kernel, c.ssm_dt_rank, c.ssm_n_group, c.ssm_d_inner);
    }
    return Status::ok();
}
}  // namespace

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
    if (c.arch == "deepseek2" || c.arch == "gpt-oss") read_deepseek2_gptoss_keys(f, p, c);
    if (c.arch == "qwen3next" || c.arch == "qwen35moe") STRATA_TRY(read_qwen3next_keys(f, p, c));

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
