#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backend/cpu/cpu_op_profile.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "model/blocks/blocks.h"
#include "model/blocks/moe_routing.h"

namespace strata {

void dense_ffn_block(const DenseFfnWeights& w, const ModelConfig& cfg, float* x, const Batch& batch, CpuContext& ctx) {
    using namespace block_slots;
    const int64_t n = batch.n_tokens, e = cfg.n_embd, ff = w.gate.ne[1];
    float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
    cpu_rms_norm(x, w.norm.f32(), n, e, cfg.rms_eps, h, ctx);
    float* gate = ctx.scratch_floats(kGate, static_cast<size_t>(n * ff));
    float* up = ctx.scratch_floats(kUp, static_cast<size_t>(n * ff));
    const MatmulJob gate_up[] = {{&w.gate, 0, h, n, gate}, {&w.up, 0, h, n, up}};
    cpu_matmul_grouped(gate_up, ctx);
    cpu_swiglu(gate, up, n * ff);
    float* out = ctx.scratch_floats(kProj, static_cast<size_t>(n * e));
    cpu_matmul(w.down, 0, gate, n, out, ctx);
    cpu_add(x, out, n * e);
}

// Softmax routing (Mixtral, Qwen3-MoE): softmax over all experts, keep the top k, renormalize
// the kept weights to sum to one; then the routed-expert pass of every MoE block.
namespace {

struct MoeStepScratch {
    std::vector<int32_t> ids;
    std::vector<float> weights;
    ExpertAssignments by_expert;
};

MoeStepScratch& moe_step_scratch() {
    thread_local MoeStepScratch scratch;
    return scratch;
}

}  // namespace

void moe_ffn_block(const MoeFfnWeights& w, const ModelConfig& cfg, float* x, const Batch& batch, CpuContext& ctx) {
    using namespace block_slots;
    const int64_t n = batch.n_tokens, e = cfg.n_embd;
    float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
    cpu_rms_norm(x, w.norm.f32(), n, e, cfg.rms_eps, h, ctx);
    moe_ffn(w, cfg, h, batch, ctx, x);
}

void moe_ffn(const MoeFfnWeights& w, const ModelConfig& cfg, const float* h, const Batch& batch, CpuContext& ctx,
             float* acc) {
    using namespace block_slots;
    const int64_t n = batch.n_tokens, e = cfg.n_embd, n_exp = cfg.n_expert, k = cfg.n_expert_used;

    float* logits = ctx.scratch_floats(kRouter, static_cast<size_t>(n * n_exp));
    cpu_matmul(w.router, 0, h, n, logits, ctx);

    // Selected (expert, weight) pairs per token, then grouped by expert; in storage kept per thread
    // from step to step, so that a decode step allocates nothing once warm.
    CpuOpScope routing_scope("moe routing");
    MoeStepScratch& scratch = moe_step_scratch();
    std::vector<int32_t>& ids = scratch.ids;
    std::vector<float>& weights = scratch.weights;
    ids.resize(static_cast<size_t>(n * k));
    weights.resize(static_cast<size_t>(n * k));
    route_softmax_topk(logits, n, n_exp, k, cfg.norm_topk_prob, ids.data(), weights.data());
    ExpertAssignments& by_expert = scratch.by_expert;
    by_expert.resize(static_cast<size_t>(n_exp));
    for (auto& list : by_expert) {  // an expert takes at most one pair per token: no list grows below
        list.clear();
        list.reserve(static_cast<size_t>(n));
    }
    for (int64_t t = 0; t < n; ++t) {
        for (int64_t j = 0; j < k; ++j) {
            const size_t i = static_cast<size_t>(t * k + j);
            by_expert[static_cast<size_t>(ids[i])].emplace_back(t, weights[i]);
        }
    }
    const RoutedExpertWeights experts{w.gate_exps, w.up_exps, w.down_exps, {}, {}, {}};
    apply_routed_experts(experts, ExpertActivation::SwiGlu, h, n, e, by_expert, acc, ctx, batch.expert_source);
}

void shared_expert_ffn(const SharedExpertWeights& w, const ModelConfig& cfg, const float* h, int64_t n, float* out,
                       CpuContext& ctx) {
    using namespace block_slots;
    const int64_t e = cfg.n_embd, ff = w.gate.ne[1];
    float* gate = ctx.scratch_floats(kSharedGate, static_cast<size_t>(n * ff));
    float* up = ctx.scratch_floats(kSharedUp, static_cast<size_t>(n * ff));
    float* scale = ctx.scratch_floats(kSharedScale, static_cast<size_t>(n));
    cpu_matmul(w.gate, 0, h, n, gate, ctx);
    cpu_matmul(w.up, 0, h, n, up, ctx);
    cpu_matmul(w.gate_inp, 0, h, n, scale, ctx);
    cpu_swiglu(gate, up, n * ff);
    cpu_matmul(w.down, 0, gate, n, out, ctx);
    for (int64_t t = 0; t < n; ++t) {
        const float s = 1.0f / (1.0f + std::exp(-scale[t]));
        for (int64_t d = 0; d < e; ++d) out[t * e + d] *= s;
    }
}

}  // namespace strata
