#pragma once
// The weights of the Qwen3-Next / Qwen3.5-MoE hybrid stacks (qwen3next, qwen35moe): named,
// shape-checked and typed once here and read by both forward passes — the CPU one
// (qwen3next.cpp) and the GPU one (model/gpu/gpu_hybrid.cpp).
//
//   HybridWeights w;
//   STRATA_TRY(load_hybrid_weights(gguf, cfg, w));
//   w.layers[0].recurrent ? w.layers[0].delta.wqkv : w.layers[0].attn.wq   // views into the mapped file

#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "model/blocks/blocks.h"
#include "model/blocks/gated_delta_net_block.h"
#include "model/config.h"

namespace strata {

struct SharedExpertWeights {
    Weight gate, up;   // ffn_gate_shexp, ffn_up_shexp [n_embd, n_ff_shared]
    Weight down;       // ffn_down_shexp [n_ff_shared, n_embd]
    Weight gate_inp;   // ffn_gate_inp_shexp [n_embd]: the shared expert's scalar gate
};

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

}  // namespace strata
