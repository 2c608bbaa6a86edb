#pragma once
// The weights of qwen4exp (Qwen3.8-Flash-Next): named, shape-checked and typed once here
// (NEW_ARCHS.md §A2.2, checked against the real files' inventory in REAL_GGUFS.md §A3). There is
// no attn_norm, post_attention_norm or output_norm: the hyper-connection mixers' norms take
// their place.
//
//   Qwen4ExpWeights w;
//   STRATA_TRY(load_qwen4exp_weights(gguf, cfg, w));

#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "model/blocks/blocks.h"
#include "model/blocks/gated_delta_net_block.h"
#include "model/blocks/hyper_connection.h"
#include "model/blocks/ple_block.h"
#include "model/config.h"

namespace strata {

struct Qwen4ExpLayer {
    bool recurrent = false;
    HyperConnectionWeights hc_attn, hc_ffn;  // the mixers before the token mixer and before the MoE
    GatedDeltaNetWeights delta;              // recurrent blocks (norm unused)
    GatedAttentionWeights attn;              // QSA blocks, with their indexer (norm unused)
    MoeFfnWeights moe;                       // norm unused
    SharedExpertWeights shared;
    bool has_ple = false;
    PleWeights ple;                          // the PLE block's (its table is per_layer_token_embd)
};

struct Qwen4ExpWeights {
    Weight token_embd;                 // [n_embd, n_vocab]
    Weight output;                     // [n_embd, n_vocab]; token_embd when absent
    HyperConnectionWeights output_hc;  // output_hc_{norm,down,up}: the final mixer, no inject
    std::vector<Qwen4ExpLayer> layers; // the trunk (the MTP block is not run yet)
};

Status load_qwen4exp_weights(const GgufFile& file, const ModelConfig& config, Qwen4ExpWeights& out);

}  // namespace strata
