#pragma once
// The shared building blocks that architecture recipes (model/arch/*.cpp) are written from.
// Each block reads the residual stream x (n_tokens rows of n_embd), computes its sub-layer from a
// normalized copy, and adds the result back into x.
//
// A batch may hold several sequences (Model::forward_multi, the server's continuous batching):
// their tokens are concatenated, so norms, projections and FFNs read every weight once for all
// of them, while attention (and the recurrent layers) read and write each sequence's own KV
// cache (and state), as batch.sequences says.
//
//   attention_block(layer.attn, cfg, x, batch, il, ctx);
//   if (layer.moe) moe_ffn_block(layer.moe_ffn, cfg, x, batch, ctx);
//   else dense_ffn_block(layer.ffn, cfg, x, batch, ctx);

#include <cstdint>
#include <span>

#include "backend/cpu/attention.h"
#include "backend/cpu/cpu_context.h"
#include "kv/kv_cache.h"
#include "kv/recurrent_state.h"
#include "model/config.h"
#include "model/weights.h"

namespace strata {

class MoeExpertSource;

// One sequence's rows of a batch: rows [first, first + n_tokens) sit at positions pos0 ..
// pos0 + n_tokens - 1 of that sequence, whose cache holds every earlier position.
struct BatchSequence {
    int64_t first = 0;
    int64_t n_tokens = 0;
    int64_t pos0 = 0;
    KvCache* kv = nullptr;
    RecurrentState* state = nullptr;  // hybrid models' recurrent layers; null otherwise
};

struct Batch {
    const int32_t* tokens = nullptr;
    const int32_t* positions = nullptr;  // positions[t]: pos0 + t for one sequence, else per row
    int64_t n_tokens = 0;
    int64_t pos0 = 0;                    // one-sequence batches (Model::forward)
    // Optional expert tiering (src/experts/): null reads every routed expert from its stacked
    // tensor in the mapped file; set, the MoE blocks ask it where each selected expert lives.
    MoeExpertSource* expert_source = nullptr;
    // The sequences whose rows make up the batch, in row order; the attention and recurrent
    // blocks need it (the architectures fill it in: model/arch/step_batch.h), FFNs do not.
    std::span<const BatchSequence> sequences = {};
};

// Shapes (GGUF order, [in, out]) in comments.
struct AttentionWeights {
    Weight norm;            // [n_embd]
    Weight wq, wk, wv;      // [n_embd, n_head*hd_k], [n_embd, n_head_kv*hd_k], [n_embd, n_head_kv*hd_v]
    Weight bq, bk, bv;      // optional biases
    Weight q_norm, k_norm;  // optional per-head RMS norms [hd_k] (Qwen3)
    Weight wo;              // [n_head*hd_v, n_embd]
    Weight bo;              // optional
};

struct DenseFfnWeights {
    Weight norm;              // [n_embd]
    Weight gate, up;          // [n_embd, n_ff]
    Weight down;              // [n_ff, n_embd]
};

struct MoeFfnWeights {
    Weight norm;                 // [n_embd]
    Weight router;               // [n_embd, n_expert]
    Weight gate_exps, up_exps;   // [n_embd, n_ff_expert, n_expert]
    Weight down_exps;            // [n_ff_expert, n_embd, n_expert]
};

// Where the MoE block reads the selected experts' matrices from (implemented by src/experts/, which
// keeps copies of some experts in a fast tier). Only the location changes, never the arithmetic:
// a tiered step gives the same logits as an all-resident one. Per MoE layer and batch:
// begin_step → matrices(ex) for each selected expert → end_step; memory handed out by matrices()
// stays valid until end_step, after which the source may admit and evict.
struct MoeExpertMatrices {
    const Weight* gate;    // [n_embd, n_ff_expert, *] — matrix `index` is the expert
    const Weight* up;
    const Weight* down;    // [n_ff_expert, n_embd, *]
    int64_t index;
};
class MoeExpertSource {
public:
    virtual ~MoeExpertSource() = default;
    // w identifies the layer; tokens_per_expert[ex] > 0 for each expert this batch selected.
    virtual void begin_step(const MoeFfnWeights& w, std::span<const int64_t> tokens_per_expert) = 0;
    virtual MoeExpertMatrices matrices(int64_t expert) = 0;
    virtual void end_step() = 0;
};

void attention_block(const AttentionWeights& w, const ModelConfig& cfg, float* x, const Batch& batch, int64_t layer,
                     CpuContext& ctx);
void dense_ffn_block(const DenseFfnWeights& w, const ModelConfig& cfg, float* x, const Batch& batch, CpuContext& ctx);
void moe_ffn_block(const MoeFfnWeights& w, const ModelConfig& cfg, float* x, const Batch& batch, CpuContext& ctx);
// The MoE alone, on an input h that is already normalized: acc += Σ routed experts(h) (softmax
// top-k routing; w.norm unused).
void moe_ffn(const MoeFfnWeights& w, const ModelConfig& cfg, const float* h, const Batch& batch, CpuContext& ctx,
             float* acc);

// The shared expert of the Qwen MoE hybrids: SwiGLU scaled by a sigmoid gate of its own input.
struct SharedExpertWeights {
    Weight gate, up;   // ffn_gate_shexp, ffn_up_shexp [n_embd, n_ff_shared]
    Weight down;       // ffn_down_shexp [n_ff_shared, n_embd]
    Weight gate_inp;   // ffn_gate_inp_shexp [n_embd]: the shared expert's scalar gate
};
// out = sigmoid(gate_inp · h) · down(silu(gate h) · up h), n rows of n_embd (h already normalized).
void shared_expert_ffn(const SharedExpertWeights& w, const ModelConfig& cfg, const float* h, int64_t n, float* out,
                       CpuContext& ctx);

// The attention step every attention block shares, per sequence of the batch: row t's key
// (k + t·k_stride, kv.k_dim() floats) and value (v + t·v_stride, kv.v_dim() floats) go into its
// sequence's cache at its position, then each sequence's queries (rows of n_head·head_dim_k,
// already roped) attend causally over its own cache into out (rows of n_head·head_dim_v).
// `selections`, when given, holds one KeySelection per sequence (QSA): its queries read only those keys.
void store_and_attend(const Batch& batch, int64_t layer, const float* k, int64_t k_stride, const float* v,
                      int64_t v_stride, const float* q, const AttentionParams& p, float* out, CpuContext& ctx,
                      std::span<const KeySelection> selections = {});

// Scratch slots the blocks use (CpuContext::kFirstFreeSlot and up).
namespace block_slots {
constexpr int kNormed = CpuContext::kFirstFreeSlot;
constexpr int kQ = kNormed + 1, kK = kNormed + 2, kV = kNormed + 3, kAttnOut = kNormed + 4, kProj = kNormed + 5;
constexpr int kGate = kNormed + 6, kUp = kNormed + 7;
constexpr int kRouter = kNormed + 8, kExpertOut = kNormed + 9;
// (kExpertOut + 1 .. + 5: the MLA block's, mla_attention_block.cpp)
constexpr int kSharedGate = kNormed + 15, kSharedUp = kNormed + 16, kSharedScale = kNormed + 17;
}  // namespace block_slots

}  // namespace strata
