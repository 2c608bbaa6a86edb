#pragma once
// DeepSeek-V2/V3's weights (GGUF architecture "deepseek2"): named, shape-checked and typed once
// here and read by both forward passes — the CPU one (deepseek2.cpp) and the GPU one
// (model/gpu/gpu_deepseek2.cpp) — with what both derive from the metadata: the rope table and
// softmax scale of the latent attention, and the router's parameters. Only the split-kv_b layout
// of llama.cpp's current converter (attn_k_b / attn_v_b, one latent kv head) is read; older files
// with attn_kv_b are refused.
//
//   Deepseek2Weights w;
//   STRATA_TRY(load_deepseek2_weights(gguf, cfg, w));
//   const MlaRope rope = deepseek2_rope(cfg);            // table + kq_scale
//   GroupedRouting r = deepseek2_routing(cfg, w.layers[1].router_bias.f32());

#include <vector>

#include "backend/cpu/rope_table.h"
#include "core/status.h"
#include "gguf/reader.h"
#include "model/blocks/blocks.h"
#include "model/blocks/mla_attention_block.h"
#include "model/blocks/moe_routing.h"
#include "model/config.h"

namespace strata {

struct Deepseek2Layer {
    MlaAttentionWeights attn;
    bool moe = false;
    DenseFfnWeights ffn;       // the leading dense layers (and every layer of a model without experts)
    // MoE layers: norm = ffn_norm, router = ffn_gate_inp, the stacked routed experts.
    MoeFfnWeights moe_ffn;
    Weight router_bias;        // [n_expert] exp_probs_b (e_score_correction_bias), optional: for the choice only
    // The shared experts as one SwiGLU (ffn_*_shexp), absent when expert_shared_count is 0:
    Weight gate_sh, up_sh;     // [n_embd, n_ff_expert · n_expert_shared]
    Weight down_sh;            // [n_ff_expert · n_expert_shared, n_embd]
};

struct Deepseek2Weights {
    Weight token_embd;   // [n_embd, n_vocab]
    Weight output_norm;  // [n_embd]
    Weight output;       // [n_embd, n_vocab]; token_embd when the embeddings are tied
    std::vector<Deepseek2Layer> layers;
};

// Checks that the metadata describes the absorbed-MLA layout and expert groups that fit, then
// reads every tensor.
Status load_deepseek2_weights(const GgufFile& file, const ModelConfig& config, Deepseek2Weights& out);

// The rope of the latent attention's rope_dims tail, and HF's softmax scale: 1/sqrt(dk), times
// YaRN's mscale² for long-context checkpoints.
struct MlaRope {
    RopeTable table;
    float kq_scale = 1.0f;
};
MlaRope deepseek2_rope(const ModelConfig& config);

// The router of the MoE layers as route_grouped takes it; `selection_bias` is the layer's
// exp_probs_b (host or device memory: only the pointer is copied), or null.
GroupedRouting deepseek2_routing(const ModelConfig& config, const float* selection_bias);

}  // namespace strata
