#pragma once
// Hyper-connections (qwen4exp; HF Qwen4ExpTextGatedResidual): the residual is hc streams of
// n_embd per token (R, rows of hc·n_embd), all starting as the token's embedding. Before each
// mixer and each MoE, a mixer of low rank makes the block's input from the normalized streams
// and gives each stream a weight for the block's output:
//   n = grouped_rmsnorm(R; γ)                      (each stream normalized alone)
//   m = σ(W_up · silu(W_down · n / hc))            x = (1/hc) Σ_s m_s ⊙ n_s
//   a = 2σ(W_inject · n / hc)                      R_s += a_s · block(x)      (the raw R, not n)
// The model's last mixer has no inject weights: its x goes to the output head (no output norm).
//
//   hyper_connection_mix(w, cfg, R, n_tokens, x, a, ctx);     // x: rows of n_embd, a: rows of hc
//   ... y = block(x) ...
//   hyper_connection_combine(y, a, n_tokens, cfg, R);

#include <cstdint>

#include "backend/cpu/cpu_context.h"
#include "backend/weight.h"
#include "model/config.h"

namespace strata {

struct HyperConnectionWeights {
    Weight norm;    // hc_{attn,ffn}_norm / output_hc_norm [hc·n_embd] F32 (the converter added the 1)
    Weight down;    // hc_*_down [hc·n_embd, low_rank]
    Weight up;      // hc_*_up [low_rank, hc·n_embd]
    Weight inject;  // hc_*_inject [hc·n_embd, hc] F32; empty for the final mixer
};

// x = the block input of each token; a (when w.inject is set) = the streams' output weights.
void hyper_connection_mix(const HyperConnectionWeights& w, const ModelConfig& cfg, const float* R, int64_t n_tokens,
                          float* x, float* a, CpuContext& ctx);

// R_s += a_s · y for every stream s of every token.
void hyper_connection_combine(const float* y, const float* a, int64_t n_tokens, const ModelConfig& cfg, float* R);

}  // namespace strata
