#pragma once
// The Llama family's weights (llama, mistral/mixtral, qwen3, qwen3moe, and gpt-oss, a Llama with
// biases everywhere, attention sinks, sliding windows on every other layer and biased experts):
// named, shape-checked and typed once here, and read by both forward passes — the CPU ones
// (llama_family.cpp, gpt_oss.cpp) and the GPU one (model/gpu/gpu_llama.cpp), so the tensor
// table of the family is written once.
//
//   LlamaWeights w;
//   STRATA_TRY(load_llama_weights(gguf, cfg, w));
//   w.layers[0].attn.wq   // views into the mapped file

#include <vector>

#include "backend/cpu/rope_table.h"
#include "core/status.h"
#include "gguf/reader.h"
#include "model/blocks/blocks.h"
#include "model/config.h"

namespace strata {

struct LlamaLayer {
    AttentionWeights attn;
    bool moe = false;
    DenseFfnWeights ffn;      // when !moe
    MoeFfnWeights moe_ffn;    // when moe (gpt-oss: norm = post_attention_norm)
    // gpt-oss only (empty / false otherwise):
    Weight attn_sinks;                      // [n_head] one extra softmax logit per head
    bool sliding = false;                   // attends to the last sliding_window positions only
    Weight router_bias;                     // [n_expert]
    Weight gate_bias, up_bias, down_bias;   // [n_ff_expert, n_expert] ×2, [n_embd, n_expert]
};

struct LlamaWeights {
    Weight token_embd;   // [n_embd, n_vocab]
    Weight output_norm;  // [n_embd]
    Weight output;       // [n_embd, n_vocab]; token_embd when the embeddings are tied
    std::vector<LlamaLayer> layers;
};

Status load_llama_weights(const GgufFile& file, const ModelConfig& config, LlamaWeights& out);

// gpt-oss's rope: YaRN when the metadata asks for it (HF GptOss: the ramp's ends not rounded,
// cos/sin scaled by get_mscale(factor)), else the plain frequencies.
RopeTable gpt_oss_rope_table(const ModelConfig& config);

}  // namespace strata
