#pragma once
// Hyper-parameters of a model, read from GGUF metadata (keys `<arch>.<name>` as llama.cpp's
// converter writes them). One struct for every architecture; fields an architecture does not use
// keep their defaults.
//
//   STRATA_ASSIGN_OR_RETURN(ModelConfig cfg, ModelConfig::from_gguf(gguf));
//   if (cfg.is_moe()) ... cfg.n_expert, cfg.n_expert_used

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/reader.h"

namespace strata {

enum class RopeStyle {
    Normal,  // rotate pairs (x[2i], x[2i+1]) — llama, mixtral, deepseek2
    Neox,    // rotate halves (x[i], x[i + d/2]) — qwen3, qwen3moe, gpt-oss, qwen3next
};

struct ModelConfig {
    std::string arch;            // general.architecture
    uint32_t n_layer = 0;
    uint32_t n_embd = 0;
    uint32_t n_vocab = 0;
    uint32_t n_ctx_train = 0;
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;
    uint32_t head_dim_k = 0;     // attention.key_length (default n_embd / n_head)
    uint32_t head_dim_v = 0;     // attention.value_length
    uint32_t n_ff = 0;           // dense FFN width
    float rms_eps = 1e-5f;

    // Rotary position embedding.
    RopeStyle rope_style = RopeStyle::Normal;
    uint32_t rope_dims = 0;      // rotated dimensions per head (partial rope when < head_dim_k)
    float rope_base = 10000.0f;

    // Mixture of experts.
    uint32_t n_expert = 0;
    uint32_t n_expert_used = 0;
    uint32_t n_ff_expert = 0;
    bool norm_topk_prob = true;  // renormalize the selected experts' weights to sum to 1

    bool is_moe() const { return n_expert > 0; }
    uint32_t q_dim() const { return n_head * head_dim_k; }
    uint32_t kv_dim_k() const { return n_head_kv * head_dim_k; }
    uint32_t kv_dim_v() const { return n_head_kv * head_dim_v; }

    static Result<ModelConfig> from_gguf(const GgufFile& file);
};

// Architectures the CPU engine runs (general.architecture values).
const std::vector<std::string>& supported_architectures();

}  // namespace strata
