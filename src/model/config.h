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
#include "model/architecture.h"

namespace strata {

// QSA's lightning indexer (qwen4exp): per attention layer with compress_ratio > 0, a query sees
// the top_k / compress_ratio best-scoring complete blocks of compress_ratio tokens, plus the
// tokens after the last complete block.
struct QsaIndexerConfig {
    uint32_t n_head = 0;                  // attention.indexer.head_count (query heads; one key head)
    uint32_t head_dim = 0;                // attention.indexer.key_length
    uint32_t top_k = 0;                   // attention.indexer.top_k: tokens (not blocks) kept
    std::vector<uint32_t> compress_ratio; // attention.compress_ratios, per block (0: dense attention)
    uint32_t ratio(uint32_t il) const { return il < compress_ratio.size() ? compress_ratio[il] : 0; }
};

// The per-layer n-gram embedding (qwen4exp's PLE): token-id n-grams hashed into rows of one table
// (per_layer_token_embd), gated into every residual stream of one block. layer < 0: none.
struct PleConfig {
    int32_t layer = -1;                     // ple.layers[0] (0-based block)
    uint32_t ngram_size = 0;                // ple.ngram_size: n-grams of 2 .. ngram_size tokens
    uint32_t heads_per_ngram = 0;           // ple.heads_per_ngram
    uint32_t conv_kernel = 0;               // ple.conv_kernel (its dilation is ngram_size)
    uint32_t row_width = 0;                 // embedding_length_per_layer_input: floats per table row
    int32_t eos_token = -1;                 // ple.eos_token_id: cuts the n-gram context
    std::vector<uint64_t> multipliers;      // ple.layer_multipliers [ngram_size]
    std::vector<uint64_t> head_offsets;     // ple.head_offsets [heads]: first table row of each head
    std::vector<uint64_t> head_sizes;       // ple.head_vocab_sizes [heads]: each head's prime modulus
    uint32_t n_heads() const { return ngram_size > 1 ? (ngram_size - 1) * heads_per_ngram : 0; }
};

// DeepSeek-V4's own hyper-parameters (deepseek4; read in model/arch/deepseek4_keys.cpp). The
// shared ones live in ModelConfig: q_lora_rank, sliding_window, the experts' counts and scale, the
// indexer (its compress_ratio per block: 0 sliding only, 4 CSA with the indexer, 128 HCA),
// hc_count streams, the YaRN fields (they apply to the compressed layers' rope only).
struct Deepseek4Config {
    uint32_t o_groups = 0;             // attention.output_group_count: heads split into groups ...
    uint32_t o_lora_rank = 0;          // attention.output_lora_rank: ... each projected to this width
    float compress_rope_base = 0.0f;   // attention.compress_rope_freq_base: θ of the compressed layers
    uint32_t sinkhorn_iters = 0;       // hyper_connection.sinkhorn_iterations
    float hc_eps = 0.0f;               // hyper_connection.epsilon
    uint32_t n_hash_layers = 0;        // hash_layer_count: the first blocks route by token id
    std::vector<float> swiglu_limit;         // swiglu_clamp_exp, per block (0: no clamp)
    std::vector<float> swiglu_limit_shared;  // swiglu_clamp_shexp, per block
};

struct ModelConfig {
    Arch arch = Arch::Llama;     // general.architecture (model/architecture.h)
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

    // --- deepseek2 and gpt-oss (read in model/architecture.cpp) ---
    // MLA: the cache holds one latent row per token (head_count_kv 1, key_length = kv_lora_rank
    // + rope dims, value_length = kv_lora_rank); per-head q·k and v widths are the *_mla ones.
    uint32_t q_lora_rank = 0;          // attention.q_lora_rank (0: q projected directly)
    uint32_t kv_lora_rank = 0;         // attention.kv_lora_rank
    uint32_t head_dim_k_mla = 0;       // attention.key_length_mla (nope + rope dims)
    uint32_t head_dim_v_mla = 0;       // attention.value_length_mla
    uint32_t n_leading_dense = 0;      // leading_dense_block_count: first layers with a dense FFN
    uint32_t n_expert_shared = 0;      // expert_shared_count
    uint32_t n_expert_group = 1;       // expert_group_count: experts are chosen from the best groups
    uint32_t n_expert_group_used = 1;  // expert_group_used_count
    float expert_weights_scale = 1.0f; // expert_weights_scale: routed output multiplier
    uint32_t expert_gating_func = 0;   // expert_gating_func: 1 softmax, 2 sigmoid (0: absent)
    uint32_t sliding_window = 0;       // attention.sliding_window (gpt-oss: even layers slide)
    // YaRN context extension (rope.scaling.*); yarn false: plain rope.
    bool rope_yarn = false;
    float rope_scaling_factor = 1.0f;  // rope.scaling.factor
    uint32_t rope_orig_ctx = 0;        // rope.scaling.original_context_length
    float yarn_beta_fast = 32.0f, yarn_beta_slow = 1.0f;
    float yarn_log_multiplier = 0.0f;  // rope.scaling.yarn_log_multiplier (DeepSeek: 0.1 * mscale_all_dim)

    // --- qwen3next and qwen35moe (read in model/architecture.cpp) ---
    // Hybrid stacks: gated DeltaNet (linear attention) layers, and gated full attention on every
    // full_attention_interval-th layer. DeltaNet q/k heads are ssm_n_group heads of ssm_d_state;
    // v heads are ssm_dt_rank heads of ssm_d_inner / ssm_dt_rank.
    uint32_t ssm_conv_kernel = 0;          // ssm.conv_kernel: taps of the causal short convolution
    uint32_t ssm_d_state = 0;              // ssm.state_size: q/k head width
    uint32_t ssm_n_group = 0;              // ssm.group_count: q/k heads
    uint32_t ssm_dt_rank = 0;              // ssm.time_step_rank: v heads
    uint32_t ssm_d_inner = 0;              // ssm.inner_size: all v heads together
    uint32_t full_attention_interval = 0;  // full_attention_interval (0: no recurrent layers)
    uint32_t n_ff_shared_expert = 0;       // expert_shared_feed_forward_length
    // Layer il is a DeltaNet layer unless it is the interval-th one (llama.cpp's rule), or, where
    // the file marks each block (qwen4exp), unless the mark says attention.
    bool is_recurrent_layer(uint32_t il) const {
        if (!attention_layers.empty()) return il < attention_layers.size() && attention_layers[il] == 0;
        return full_attention_interval > 0 && (il + 1) % full_attention_interval != 0;
    }
    std::vector<uint8_t> attention_layers;  // per block, 1: attention (qwen4exp); empty: by the interval

    // --- qwen4exp (read in model/arch/qwen4exp_keys.cpp) ---
    // The hybrid stack above, with hc_count parallel residual streams (hyper-connections) mixed
    // into each block's input and fed its output; QSA attention, whose lightning indexer picks
    // the blocks of compress_ratio tokens a query sees; and one PLE block (an n-gram embedding).
    uint32_t hc_count = 0;      // hyper_connection.count (0: the plain single residual stream)
    uint32_t hc_lowrank = 0;    // hyper_connection.low_rank: width of the mixers' gate
    QsaIndexerConfig indexer;
    PleConfig ple;
    uint32_t n_mtp_layers = 0;  // nextn_predict_layers: MTP blocks after the n_layer trunk blocks

    // --- deepseek4 ---
    Deepseek4Config dsv4;

    bool is_moe() const { return n_expert > 0; }
    std::string_view arch_name() const { return architecture(arch).name; }
    uint32_t q_dim() const { return n_head * head_dim_k; }
    uint32_t kv_dim_k() const { return n_head_kv * head_dim_k; }
    uint32_t kv_dim_v() const { return n_head_kv * head_dim_v; }

    static Result<ModelConfig> from_gguf(const GgufFile& file);
};

}  // namespace strata
