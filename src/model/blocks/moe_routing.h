#pragma once
// Expert routing schemes beyond the plain softmax top-k of moe_ffn_block, and the routed-expert
// pass they feed. Routing turns router logits into (token, weight) lists per expert; the expert
// pass then reads each chosen expert's matrices once per batch.
//
//   ExpertAssignments routed;
//   route_grouped(logits, n_tokens, GroupedRouting{...}, routed);     // DeepSeek-V3
//   route_topk_softmax(logits, n_tokens, n_expert, k, routed);         // gpt-oss
//   apply_routed_experts(experts, ExpertActivation::SwiGlu, h, n_tokens, n_embd, routed, x, ctx);

#include <cstdint>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "model/blocks/blocks.h"
#include "model/weights.h"

namespace strata {

// by_expert[e] = the (token, weight) pairs routed to expert e.
using ExpertAssignments = std::vector<std::vector<std::pair<int64_t, float>>>;

struct GroupedRouting {
    int64_t n_expert = 0;
    int64_t n_used = 0;                    // experts per token
    int64_t n_group = 1;                   // experts split into this many equal groups ...
    int64_t n_group_used = 1;              // ... and only the best n_group_used are eligible
    bool sigmoid = true;                   // scores: sigmoid(logit) (DeepSeek-V3), else softmax (V2)
    const float* selection_bias = nullptr; // [n_expert] added to the scores for choosing only
    bool normalize = true;                 // chosen weights divided by their sum
    float scale = 1.0f;                    // then multiplied by this (routed_scaling_factor)
};
// DeepSeek-V3's router (HF DeepseekV3TopkRouter): a group's merit is the sum of its two best
// biased scores; experts outside the best groups are excluded; the top n_used biased scores
// choose the experts; their weights are the unbiased scores.
void route_grouped(const float* logits, int64_t n_tokens, const GroupedRouting& p, ExpertAssignments& out);

// The softmax routing of moe_ffn_block (Mixtral, Qwen3-MoE): per token, a softmax over all the
// logits (in place: logits then hold the probabilities), the k most probable experts in order
// (the lower index on ties) and their probabilities, divided by their sum when `normalize`.
// ids and weights: n_tokens rows of k. The GPU routing kernels are checked against this.
void route_softmax_topk(float* logits, int64_t n_tokens, int64_t n_expert, int64_t k, bool normalize, int32_t* ids,
                        float* weights);

// DeepSeek-V4's router (HF DeepseekV4TopKRouter / DeepseekV4HashRouter): scores
// s = sqrt(softplus(logit)); the experts are the k ids of `hash_ids` (n_tokens rows of k: the
// tid2eid rows of the tokens, on the hash-routed layers) or else the top k of s + bias (the bias
// only chooses); weights s_i / (Σ_chosen s + 1e-20) when `normalize`, times `scale`.
struct SqrtSoftplusRouting {
    int64_t n_expert = 0;
    int64_t n_used = 0;
    const float* selection_bias = nullptr;  // [n_expert]; null: none
    const int32_t* hash_ids = nullptr;      // [n_tokens × n_used]; set: the experts are these
    bool normalize = true;
    float scale = 1.0f;
};
// Fails (false) on a hash id outside [0, n_expert): a corrupt table must not index past the experts.
bool route_sqrt_softplus(const float* logits, int64_t n_tokens, const SqrtSoftplusRouting& p, ExpertAssignments& out);

// gpt-oss's router: the top k logits, then a softmax over those k only.
void route_topk_softmax(const float* logits, int64_t n_tokens, int64_t n_expert, int64_t k, ExpertAssignments& out);

// Stacked expert matrices; biases [n_ff, n_expert] / [n_embd, n_expert] are optional.
struct RoutedExpertWeights {
    Weight gate_exps, up_exps;   // [n_embd, n_ff, n_expert]
    Weight down_exps;            // [n_ff, n_embd, n_expert]
    Weight gate_bias, up_bias;   // [n_ff, n_expert] (gpt-oss)
    Weight down_bias;            // [n_embd, n_expert] (gpt-oss)
    float swiglu_limit = 0.0f;   // ExpertActivation::ClampedSwiGlu's limit (deepseek4)
};

enum class ExpertActivation {
    SwiGlu,              // silu(gate) * up
    GptOssClampedSwiGlu, // gate ≤ 7, up ∈ [-7, 7]; gate * sigmoid(1.702 gate) * (up + 1)
    ClampedSwiGlu,       // silu(min(gate, limit)) * clamp(up, -limit, limit) (deepseek4's swiglu_limit)
};

// gate[i] = act(gate[i], up[i]) for i < n: the experts' activation (the GPU op's reference too).
// `limit`: ClampedSwiGlu's (ignored by the others).
void apply_expert_activation(ExpertActivation act, float* gate, const float* up, int64_t n, float limit = 0.0f);

// x[t] += Σ_e weight(t, e) · expert_e(h[t]) for the assignments; h: n_tokens rows of n_embd.
// With a source (the batch's MoeExpertSource: the routing counter of `strata profile`, the expert
// tiers), it is told the step's routing and says where each expert's matrices are read from; the
// biases stay those of w. Every MoE block ends here (moe_ffn_block after its softmax routing).
void apply_routed_experts(const RoutedExpertWeights& w, ExpertActivation act, const float* h, int64_t n_tokens,
                          int64_t n_embd, const ExpertAssignments& routed, float* x, CpuContext& ctx,
                          MoeExpertSource* source = nullptr);

}  // namespace strata
