#pragma once
// qwen4exp's PLE block (HF Qwen4ExpTextNGramEmbedding + Qwen4ExpTextPLELayer), added to the wide
// residual R (rows of hc·n_embd) before its block's mixer:
//   per token: the n-grams of 2 .. ngram_size token ids ending at it (an EOS cuts the context:
//   a predecessor with an EOS after it reads as EOS; the sequence starts EOS-filled) are hashed
//     mixed_n = XOR_{k<n} (ctx_k · m_k)   (64-bit),   row_h = mixed_n mod P_h + offset_h
//   into heads_per_ngram rows each of one table; E = the heads' rows side by side.
//   k = grouped_rmsnorm(W_key E; γ_k),  q = grouped_rmsnorm(R; γ_q),  v = W_value E
//   g_s = k_s · q_s / sqrt(n_embd);  g_s = sign(g_s) sqrt(max(|g_s|, 1e-6));  u_s = σ(g_s) v
//   R += u + silu(dwconv(grouped_rmsnorm(u; γ_c)))    causal, kernel conv_kernel, dilation ngram_size
// The convolution's last (kernel-1)·dilation inputs and the last ngram_size-1 token ids are the
// block's state per sequence (RecurrentState::history of its layer).
//
//   ple_block(w, table, cfg, R, batch, layer, ctx);

#include <cstdint>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "backend/weight.h"
#include "kv/recurrent_state.h"
#include "model/blocks/blocks.h"
#include "model/config.h"

namespace strata {

class PleTable;

struct PleWeights {
    Weight table;                           // per_layer_token_embd [row_width, rows]
    Weight key;                             // ple_key [heads·row_width, hc·n_embd]
    Weight value;                           // ple_value [heads·row_width, n_embd]
    Weight norm_key, norm_query, norm_conv; // ple_norm_* [hc·n_embd] F32 (the converter added the 1)
    Weight conv;                            // ple_conv1d [conv_kernel, hc·n_embd] F32
};

// Floats and token ids of the block's per-sequence history (RecurrentState::add_history).
int64_t ple_history_floats(const ModelConfig& cfg);
int64_t ple_history_tokens(const ModelConfig& cfg);

// The table rows of n tokens (n rows of n_heads ids), given the sequence's last ngram_size-1
// token ids before them (oldest first; EOS-filled at the start), which are updated on return.
void ple_table_rows(const PleConfig& ple, const int32_t* tokens, int64_t n, int32_t* history, int32_t* rows);

// `table`: where the rows of w.table are read from (model/ple_table.h: mapping, RAM or SSD).
void ple_block(const PleWeights& w, PleTable& table, const ModelConfig& cfg, float* R, const Batch& batch,
               int64_t layer, CpuContext& ctx);

}  // namespace strata
