#include "model/architecture.h"

#include "core/check.h"
#include "core/status.h"
#include "gguf/reader.h"
#include "model/arch/deepseek4_keys.h"
#include "model/arch/qwen4exp_keys.h"
#include "model/config.h"

namespace strata {

namespace {

// Keys that deepseek2 and gpt-oss share (rope scaling, sliding window, expert groups); absent
// keys keep the defaults of config.h.
void read_shared_deepseek2_gptoss_keys(const GgufFile& f, const std::string& p, ModelConfig& c) {
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
}

Status read_gpt_oss_keys(const GgufFile& f, const std::string& p, ModelConfig& c) {
    read_shared_deepseek2_gptoss_keys(f, p, c);
    return Status::ok();
}

Status read_deepseek2_keys(const GgufFile& f, const std::string& p, ModelConfig& c) {
    read_shared_deepseek2_gptoss_keys(f, p, c);
    // llama.cpp's converter writes the flag only when the checkpoint normalizes.
    c.norm_topk_prob = f.get_bool(p + "expert_weights_norm", false);
    return Status::ok();
}

}  // namespace

Status read_hybrid_keys(const GgufFile& f, const std::string& p, ModelConfig& c) {
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

namespace {

// Rope styles are llama.cpp's LLAMA_ROPE_TYPE_NORM (llama; deepseek2, whose HF rope_interleave
// pairs neighbours) and NEOX (the Qwen family, gpt-oss).
constexpr ArchitectureInfo kArchitectures[] = {
    {Arch::Llama, "llama", ArchFamily::Llama, RopeStyle::Normal, {.gpu_forward = true}, nullptr},
    {Arch::Qwen3, "qwen3", ArchFamily::Llama, RopeStyle::Neox, {.qk_norm = true, .gpu_forward = true}, nullptr},
    {Arch::Qwen3Moe, "qwen3moe", ArchFamily::Llama, RopeStyle::Neox, {.qk_norm = true, .gpu_forward = true}, nullptr},
    {Arch::Deepseek2, "deepseek2", ArchFamily::Deepseek2, RopeStyle::Normal, {.gpu_forward = true}, read_deepseek2_keys},
    {Arch::GptOss, "gpt-oss", ArchFamily::GptOss, RopeStyle::Neox, {.gpu_forward = true}, read_gpt_oss_keys},
    {Arch::Qwen3Next, "qwen3next", ArchFamily::Hybrid, RopeStyle::Neox,
     {.recurrent_state = true, .gpu_forward = true}, read_hybrid_keys},
    {Arch::Qwen35Moe, "qwen35moe", ArchFamily::Hybrid, RopeStyle::Neox,
     {.recurrent_state = true, .gpu_forward = true}, read_hybrid_keys},
    {Arch::Qwen4Exp, "qwen4exp", ArchFamily::Qwen4Exp, RopeStyle::Neox, {.recurrent_state = true, .gpu_forward = true},
     read_qwen4exp_keys},
    // deepseek4 ropes interleaved pairs (ggml's NORM type) on the last dims of each head; no GPU
    // forward pass yet, so the GPU loader refuses it with that reason.
    {Arch::Deepseek4, "deepseek4", ArchFamily::Deepseek4, RopeStyle::Normal, {.recurrent_state = true},
     read_deepseek4_keys},
};

}  // namespace

std::span<const ArchitectureInfo> architectures() { return kArchitectures; }

const ArchitectureInfo* find_architecture(std::string_view name) {
    for (const ArchitectureInfo& a : kArchitectures) {
        if (a.name == name) return &a;
    }
    return nullptr;
}

const ArchitectureInfo& architecture(Arch id) {
    for (const ArchitectureInfo& a : kArchitectures) {
        if (a.id == id) return a;
    }
    STRATA_CHECK(false, "an Arch value without a row in kArchitectures");
    return kArchitectures[0];
}

std::string architecture_names(bool gpu_only) {
    std::string list;
    for (const ArchitectureInfo& a : kArchitectures) {
        if (gpu_only && !a.traits.gpu_forward) continue;
        if (!list.empty()) list += ", ";
        list += a.name;
    }
    return list;
}

}  // namespace strata
