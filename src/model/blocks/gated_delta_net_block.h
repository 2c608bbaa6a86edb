#pragma once
// The token mixers of the Qwen3-Next / Qwen3.5 hybrid stacks, as blocks on the residual stream
// (like those of blocks.h): gated DeltaNet linear attention, whose per-sequence state lives in a
// RecurrentState, and gated full attention over the KV cache.
//
//   if (cfg.is_recurrent_layer(il)) gated_delta_net_block(L.delta, cfg, x, batch, il, ctx);
//   else gated_attention_block(L.attn, cfg, x, batch, il, ctx);

#include <cstdint>

#include "backend/cpu/cpu_context.h"
#include "backend/cpu/ops.h"
#include "kv/kv_cache.h"
#include "kv/recurrent_state.h"
#include "backend/cpu/ssm_ops.h"
#include "model/blocks/blocks.h"
#include "model/blocks/qsa_indexer.h"
#include "model/config.h"
#include "model/weights.h"

namespace strata {

// How the converter ordered the value heads when there are more v heads than q/k heads
// (r = n_v / n_k v heads share each q/k head).
enum class VHeadOrder {
    Grouped,  // HF order, v head h reads q/k head h / r (qwen3next)
    Tiled,    // llama.cpp's Qwen3.5 reorder for broadcasting: v head h reads q/k head h % n_k (qwen35moe)
};

// Shapes in GGUF order [in, out]; key_dim = n_k·d_k, value_dim = n_v·d_v, conv_ch = 2·key_dim + value_dim.
struct GatedDeltaNetWeights {
    Weight norm;            // attn_norm [n_embd]
    Weight wqkv;            // attn_qkv [n_embd, conv_ch]: all q heads, all k heads, all v heads
    Weight wz;              // attn_gate [n_embd, value_dim]: z, the output gate of each v head
    Weight wba;             // ssm_ba [n_embd, 2·n_v] (qwen3next): per q/k head, its r betas then its r alphas
    Weight wbeta, walpha;   // ssm_beta, ssm_alpha [n_embd, n_v] (qwen35moe), when wba is absent
    Weight conv;            // ssm_conv1d [kernel, conv_ch] F32: the taps of each channel
    Weight dt_bias;         // ssm_dt.bias [n_v] F32
    Weight a;               // ssm_a [n_v] F32: −exp(A_log), the converter already applied it
    Weight ssm_norm;        // ssm_norm [d_v] F32: the gated RMS norm's weight (not zero-centred)
    Weight wout;            // ssm_out [value_dim, n_embd]
    VHeadOrder v_order = VHeadOrder::Grouped;
    NormGate output_gate = NormGate::Silu;  // qwen4exp: sigmoid
};

// x += DeltaNet(norm(x)); folds each sequence's rows into the layer's conv and delta-rule state
// of that sequence (batch.sequences[i].state).
void gated_delta_net_block(const GatedDeltaNetWeights& w, const ModelConfig& cfg, float* x, const Batch& batch,
                           int64_t layer, CpuContext& ctx);
// The mixer alone: out = DeltaNet(h) for an input h that is already normalized (n_tokens rows of
// n_embd each; qwen4exp's hyper-connections give it), the state stepped as above. w.norm unused.
void gated_delta_net(const GatedDeltaNetWeights& w, const ModelConfig& cfg, const float* h, const Batch& batch,
                     int64_t layer, CpuContext& ctx, float* out);

struct GatedAttentionWeights {
    Weight norm;            // attn_norm [n_embd]
    Weight wq;              // attn_q [n_embd, n_head·2·hd]: per head, hd query values then hd gate values
    Weight wk, wv;          // attn_k, attn_v [n_embd, n_head_kv·hd]
    Weight q_norm, k_norm;  // attn_q_norm, attn_k_norm [hd] (the converter added the 1 of HF's 1 + w)
    Weight wo;              // attn_output [n_head·hd, n_embd]
    QsaIndexerWeights indexer;  // qwen4exp's QSA layers; empty elsewhere (dense causal attention)
};

// x += wo(attention(q, k, v) · sigmoid(gate)), with q/k RMS norms and partial NEOX rope.
void gated_attention_block(const GatedAttentionWeights& w, const ModelConfig& cfg, float* x, const Batch& batch,
                           int64_t layer, CpuContext& ctx);
// The mixer alone, on an already normalized h: out = wo(attention · sigmoid(gate)). With
// w.indexer set (qwen4exp's QSA, model/blocks/qsa_indexer.h) each query attends only to the
// key blocks the indexer picks for it.
void gated_attention(const GatedAttentionWeights& w, const ModelConfig& cfg, const float* h, const Batch& batch,
                     int64_t layer, CpuContext& ctx, float* out);

// Scratch slots of these blocks: above those of blocks.h and of the other architectures' blocks.
namespace hybrid_slots {
constexpr int kNormed = CpuContext::kFirstFreeSlot + 24;
constexpr int kMixed = kNormed + 1, kConv = kNormed + 2, kZ = kNormed + 3, kBetaAlpha = kNormed + 4;
constexpr int kGates = kNormed + 5, kCore = kNormed + 6, kProj = kNormed + 7;
constexpr int kQ = kNormed + 8, kK = kNormed + 9, kV = kNormed + 10;
}  // namespace hybrid_slots

// The pre-norm residual both hybrid blocks share: x += mixer(rms_norm(x) · norm), where
// mixer(h, out) writes n rows of n_embd.
template <class Mixer>
void hybrid_residual_block(const Weight& norm, const ModelConfig& cfg, float* x, int64_t n, CpuContext& ctx,
                           Mixer&& mixer) {
    const int64_t e = cfg.n_embd;
    float* h = ctx.scratch_floats(hybrid_slots::kNormed, static_cast<size_t>(n * e));
    cpu_rms_norm(x, norm.f32(), n, e, cfg.rms_eps, h, ctx);
    float* proj = ctx.scratch_floats(hybrid_slots::kProj, static_cast<size_t>(n * e));
    mixer(h, proj);
    cpu_add(x, proj, n * e);
}

}  // namespace strata
