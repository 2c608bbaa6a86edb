#pragma once
// The weights of qwen4exp (Qwen3.8-Flash-Next): named, shape-checked and typed once here
// (NEW_ARCHS.md §A2.2, checked against the real files' inventory in REAL_GGUFS.md §A3). There is
// no attn_norm, post_attention_norm or output_norm: the hyper-connection mixers' norms take
// their place. Both dialects of the published files and forks load: HC gammas as {hc·n_embd}
// or {n_embd, hc} (the same bytes, stream-major), routed experts as ffn_gate_exps + ffn_up_exps
// or as one fused ffn_gate_up_exps {n_embd, 2·n_ff, n_expert} (each expert's gate rows, then its
// up rows), which is split into two RAM copies at load.
//
//   Qwen4ExpWeights w;
//   STRATA_TRY(load_qwen4exp_weights(gguf, cfg, w));

#include <cstdint>
#include <memory>
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
    // Bytes made at load instead of viewed in the file (the halves of fused gate/up experts);
    // shared so that copies of these weights keep them alive.
    std::vector<std::shared_ptr<const std::vector<uint8_t>>> owned;
};

Status load_qwen4exp_weights(const GgufFile& file, const ModelConfig& config, Qwen4ExpWeights& out);

}  // namespace strata
