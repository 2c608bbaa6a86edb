#pragma once
// The weights of the Qwen3-Next / Qwen3.5-MoE hybrid stacks (qwen3next, qwen35moe): named,
// shape-checked and typed once here and read by both forward passes — the CPU one
// (qwen3next.cpp) and the GPU one (model/gpu/gpu_hybrid.cpp).
//
//   HybridWeights w;
//   STRATA_TRY(load_hybrid_weights(gguf, cfg, w));
//   w.layers[0].recurrent ? w.layers[0].delta.wqkv : w.layers[0].attn.wq   // views into the mapped file

#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "model/blocks/blocks.h"
#include "model/blocks/gated_delta_net_block.h"
#include "model/config.h"
#include "model/weights.h"

namespace strata {

struct HybridLayer {
    bool recurrent = false;
    GatedDeltaNetWeights delta;   // recurrent layers
    GatedAttentionWeights attn;   // full-attention layers
    MoeFfnWeights moe;            // norm = post_attention_norm
    SharedExpertWeights shared;
};

struct HybridWeights {
    Weight token_embd;   // [n_embd, n_vocab]
    Weight output_norm;  // [n_embd]
    Weight output;       // [n_embd, n_vocab]; token_embd when the embeddings are tied
    std::vector<HybridLayer> layers;
};

Status load_hybrid_weights(const GgufFile& file, const ModelConfig& config, HybridWeights& out);

// The parts qwen4exp shares (model/arch/qwen4exp_weights.cpp): each block's mixer and MoE tensors
// without their norms, and the shapes the recipe needs.
Status check_hybrid_shapes(const GgufFile& file, const ModelConfig& config);
void load_gated_delta_net_weights(WeightLoader& w, const std::string& block, const ModelConfig& config,
                                  bool fused_beta_alpha, GatedDeltaNetWeights& out);
void load_gated_attention_weights(WeightLoader& w, const std::string& block, const ModelConfig& config,
                                  GatedAttentionWeights& out);
void load_moe_with_shared_expert(WeightLoader& w, const std::string& block, const ModelConfig& config,
                                 MoeFfnWeights& moe, SharedExpertWeights& shared);

}  // namespace strata
