#pragma once
// The Llama family's weights (llama, mistral/mixtral, qwen3, qwen3moe): named, shape-checked and
// typed once here, and read by both forward passes — the CPU one (llama_family.cpp) and the GPU
// one (backend/gpu/gpu_llama.cpp), so the tensor table of the family is written once.
//
//   LlamaWeights w;
//   STRATA_TRY(load_llama_weights(gguf, cfg, w));
//   w.layers[0].attn.wq   // views into the mapped file

#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "model/blocks/blocks.h"
#include "model/config.h"

namespace strata {

struct LlamaLayer {
    AttentionWeights attn;
    bool moe = false;
    DenseFfnWeights ffn;      // when !moe
    MoeFfnWeights moe_ffn;    // when moe
};

struct LlamaWeights {
    Weight token_embd;   // [n_embd, n_vocab]
    Weight output_norm;  // [n_embd]
    Weight output;       // [n_embd, n_vocab]; token_embd when the embeddings are tied
    std::vector<LlamaLayer> layers;
};

Status load_llama_weights(const GgufFile& file, const ModelConfig& config, LlamaWeights& out);

}  // namespace strata
