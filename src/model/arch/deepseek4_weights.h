#pragma once
// The weights of deepseek4 (DeepSeek-V4-Flash), named, shape-checked and typed once here as
// llama.cpp's converter writes them (NEW_ARCHS.md §B2, LD `deepseek4.cpp` load_arch_tensors):
// per block the two mHC sites, the attention with its compressors (ratio 4: the overlapped one
// and the indexer's; ratio 128: the heavy one), and the MoE with its shared expert, routed by a
// token-id table (tid2eid, the first hash_layer_count blocks) or by score with a selection bias.
// A file with MTP blocks (nextn_predict_layers) has them after the trunk: loaded and kept.
//
//   Deepseek4Weights w;
//   STRATA_TRY(load_deepseek4_weights(gguf, cfg, w));

#include <deque>
#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "model/blocks/compressed_attention.h"
#include "model/blocks/manifold_hyper_connection.h"
#include "model/config.h"

namespace strata {

struct Deepseek4Moe {
    Weight norm;                          // ffn_norm [n_embd] F32
    Weight router;                        // ffn_gate_inp [n_embd, n_expert]
    Weight tid2eid;                       // ffn_gate_tid2eid I32 [n_expert_used, n_vocab] (hash blocks)
    Weight bias;                          // exp_probs_b.bias [n_expert] F32 (the other blocks)
    Weight gate_exps, up_exps, down_exps; // [n_embd, n_ff, n_expert], [n_ff, n_embd, n_expert]
    Weight gate_shexp, up_shexp;          // [n_embd, n_ff·n_shared]
    Weight down_shexp;                    // [n_ff·n_shared, n_embd]
    float limit = 0.0f, limit_shared = 0.0f;  // the SwiGLU clamps (swiglu_clamp_exp, _shexp)
};

struct Deepseek4Layer {
    MhcWeights hc_attn, hc_ffn;
    Weight attn_norm;  // [n_embd] F32
    CompressedAttentionWeights attn;
    Deepseek4Moe moe;
};

// The MTP block (llama.cpp `graph_mtp`): a sliding-only block and its input projection.
struct Deepseek4Mtp {
    Deepseek4Layer block;
    Weight eh_proj;           // nextn.eh_proj [2·n_embd, n_embd]
    Weight enorm, hnorm;      // nextn.enorm, nextn.hnorm [n_embd] F32
    Weight embed_tokens;      // nextn.embed_tokens [n_embd, n_vocab] (optional: token_embd)
    Weight shared_head_head;  // nextn.shared_head_head [n_embd, n_vocab] (optional: output)
    Weight shared_head_norm;  // nextn.shared_head_norm [n_embd] (optional: output_norm)
};

struct Deepseek4Weights {
    Weight token_embd;   // [n_embd, n_vocab]
    Weight output_norm;  // [n_embd] F32
    Weight output;       // [n_embd, n_vocab]
    MhcHeadWeights output_hc;
    std::vector<Deepseek4Layer> layers;  // the trunk
    std::vector<Deepseek4Mtp> mtp;       // nextn_predict_layers blocks, not run yet
    std::deque<std::vector<float>> widened;  // F16/BF16 tables the model reads as floats, widened at load
};

Status load_deepseek4_weights(const GgufFile& file, const ModelConfig& config, Deepseek4Weights& out);

}  // namespace strata
