#pragma once
// Manifold-constrained hyper-connections (mHC; deepseek4, HF DeepseekV4HyperConnection): the
// residual is hc streams of n_embd per token (X, rows of hc·n_embd), all starting as the token's
// embedding. Before each attention and each MoE, the streams, RMS-normalized together without a
// weight (f), give (2 + hc)·hc mixes through one matrix:
//   pre_s  = σ(scale_0·(fn·f)_s + base_s) + eps                    x = Σ_s pre_s X_s (the block's input)
//   post_s = 2σ(scale_1·(fn·f)_{hc+s} + base_{hc+s})
//   C[j,k] = scale_2·(fn·f)_{2hc+j·hc+k} + base_{2hc+j·hc+k}, made doubly stochastic by Sinkhorn
// and after the block (y = block(norm(x))):  X'_k = post_k·y + Σ_j C[j,k]·X_j.
// The model's head collapses the streams once more with pre weights only (mhc_head).
//
//   mhc_pre(w, cfg, X, n, x, post, comb, ctx);   // x: rows of n_embd, post: rows of hc, comb: rows of hc·hc
//   ... y = block(x) ...
//   mhc_post(y, post, comb, n, cfg, X);

#include <cstdint>

#include "backend/cpu/cpu_context.h"
#include "backend/weight.h"
#include "model/config.h"

namespace strata {

struct MhcWeights {
    Weight fn;     // hc_{attn,ffn}_fn [hc·n_embd, (2+hc)·hc] (F32, or F16 as ds4's files keep it)
    Weight base;   // hc_*_base [(2+hc)·hc] F32
    Weight scale;  // hc_*_scale [3] F32: pre, post, comb
};

struct MhcHeadWeights {
    Weight fn;     // output_hc_fn [hc·n_embd, hc] (F32, or F16 as ds4's files keep it)
    Weight base;   // output_hc_base [hc] F32
    Weight scale;  // output_hc_scale [1] F32
};

// In place on a hc × hc matrix of logits c[j·hc + k] (j: source stream, k: destination): a
// softmax over k of each row plus eps, each column divided by its sum (+ eps), then iters − 1
// rounds of rows, then columns, divided by their sums (+ eps). The result's rows and columns
// each sum to about one.
void mhc_sinkhorn(float* c, int64_t hc, uint32_t iters, float eps);

// x = the block input of each token; post = its hc output weights; comb = its hc·hc mixing matrix.
void mhc_pre(const MhcWeights& w, const ModelConfig& cfg, const float* X, int64_t n_tokens, float* x, float* post,
             float* comb, CpuContext& ctx);

// X_k ← post_k·y + Σ_j comb[j, k]·X_j for every stream k of every token.
void mhc_post(const float* y, const float* post, const float* comb, int64_t n_tokens, const ModelConfig& cfg, float* X);

// The head's collapse: out = Σ_s (σ(scale·(fn·f)_s + base_s) + eps)·X_s, rows of n_embd.
void mhc_head(const MhcHeadWeights& w, const ModelConfig& cfg, const float* X, int64_t n_tokens, float* out,
              CpuContext& ctx);

}  // namespace strata
