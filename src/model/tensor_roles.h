#pragma once
// What a tensor is for, from its llama.cpp name: the planner, `strata inspect` and the expert
// tiers all need to tell routed experts from dense weights.
//
//   TensorRole r = tensor_role("blk.3.ffn_up_exps.weight");   // TensorRole::RoutedExperts
//   int layer = tensor_layer("blk.3.ffn_up_exps.weight");     // 3 (-1 when not per layer)

#include <cstdint>
#include <string_view>

#include "gguf/reader.h"

namespace strata {

enum class TensorRole {
    Embedding,      // token_embd
    Output,         // output (the LM head)
    Attention,      // attn_* (q/k/v/o, MLA low-rank parts, sinks)
    LinearAttention,// ssm_* (gated delta net and its short convolution)
    Router,         // ffn_gate_inp, exp_probs_b
    RoutedExperts,  // ffn_*_exps
    SharedExperts,  // ffn_*_shexp
    DenseFfn,       // ffn_gate/up/down of dense layers
    Norm,           // *_norm
    Other,
    NgramTable,     // per_layer_token_embd: qwen4exp's n-gram (PLE) table, a few rows read a token
};
constexpr int kTensorRoleCount = 11;

TensorRole tensor_role(std::string_view name);
// gpt-oss's per-expert biases (blk.N.ffn_*_exps.bias): RoutedExperts by role, but kept whole in
// VRAM beside an expert cache, so the planner counts them as dense bytes.
bool is_routed_expert_bias(std::string_view name);
std::string_view tensor_role_name(TensorRole role);
int tensor_layer(std::string_view name);

// Byte totals that matter for placement: how much is expert weight and how much a token reads.
struct ModelByteSummary {
    uint64_t total_bytes = 0;
    uint64_t bytes_by_role[kTensorRoleCount] = {};
    uint64_t expert_count = 0;       // routed experts per layer (0 for dense models)
    uint64_t experts_used = 0;       // routed experts per token per layer
    uint64_t moe_layers = 0;         // layers that have routed experts
    uint64_t bytes_per_expert = 0;   // one expert of one layer (gate + up + down), averaged over layers
    // Bytes one decoded token reads: every non-expert weight but the embedding table (one row of
    // it), plus experts_used of each MoE layer's experts. KV cache not included.
    uint64_t bytes_per_token = 0;
};

ModelByteSummary summarize_model_bytes(const GgufFile& file);

}  // namespace strata
