#include <algorithm>
#include <numeric>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "model/blocks/blocks.h"
#include "model/blocks/moe_routing.h"

namespace strata {

void dense_ffn_block(const DenseFfnWeights& w, const ModelConfig& cfg, float* x, const Batch& batch, CpuContext& ctx) {
    using namespace block_slots;
    const int64_t n = batch.n_tokens, e = cfg.n_embd, ff = w.gate.ne[1];
    float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
    cpu_rms_norm(x, w.norm.f32(), n, e, cfg.rms_eps, h);
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
// the kept weights to sum to one. Then the batch is sorted by expert so each expert's matrices
// are read once per batch, whatever the number of tokens routed to it.
namespace {

struct MoeStepScratch {
    std::vector<int32_t> ids;
    std::vector<float> weights;
    std::vector<std::vector<std::pair<int64_t, float>>> by_expert;
    std::vector<MatmulJob> gate_up_jobs, down_jobs;
    std::vector<int64_t> tokens_per_expert;
};

MoeStepScratch& moe_step_scratch() {
    thread_local MoeStepScratch scratch;
    return scratch;
}

}  // namespace

void moe_ffn_block(const MoeFfnWeights& w, const ModelConfig& cfg, float* x, const Batch& batch, CpuContext& ctx) {
    using namespace block_slots;
    const int64_t n = batch.n_tokens, e = cfg.n_embd, n_exp = cfg.n_expert, k = cfg.n_expert_used;
    const int64_t ff = w.gate_exps.ne[1];
    float* h = ctx.scratch_floats(kNormed, static_cast<size_t>(n * e));
    cpu_rms_norm(x, w.norm.f32(), n, e, cfg.rms_eps, h);

    float* logits = ctx.scratch_floats(kRouter, static_cast<size_t>(n * n_exp));
    cpu_matmul(w.router, 0, h, n, logits, ctx);

    // Selected (expert, weight) pairs per token, then grouped by expert; in storage kept per thread
    // from step to step, so that a decode step allocates nothing once warm.
    MoeStepScratch& scratch = moe_step_scratch();
    std::vector<int32_t>& ids = scratch.ids;
    std::vector<float>& weights = scratch.weights;
    ids.resize(static_cast<size_t>(n * k));
    weights.resize(static_cast<size_t>(n * k));
    route_softmax_topk(logits, n, n_exp, k, cfg.norm_topk_prob, ids.data(), weights.data());
    auto& by_expert = scratch.by_expert;
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

    // Every (token, expert) pair gets a row; rows are grouped by expert so each expert's matrices
    // are one job. All gate/up jobs run in one grouped pass, then all down jobs in another.
    const int64_t pairs = n * k;
    float* gathered = ctx.scratch_floats(kGather, static_cast<size_t>(pairs * e));
    float* gate = ctx.scratch_floats(kGate, static_cast<size_t>(pairs * ff));
    float* up = ctx.scratch_floats(kUp, static_cast<size_t>(pairs * ff));
    float* out = ctx.scratch_floats(kExpertOut, static_cast<size_t>(pairs * e));
    std::vector<MatmulJob>& gate_up_jobs = scratch.gate_up_jobs;
    std::vector<MatmulJob>& down_jobs = scratch.down_jobs;
    gate_up_jobs.clear(), down_jobs.clear();
    // Expert tiering hook (see MoeExpertSource): the source says where each expert is read from.
    MoeExpertSource* source = batch.expert_source;
    if (source) {
        std::vector<int64_t>& tokens_per_expert = scratch.tokens_per_expert;
        tokens_per_expert.resize(static_cast<size_t>(n_exp));
        for (int64_t ex = 0; ex < n_exp; ++ex)
            tokens_per_expert[static_cast<size_t>(ex)] = static_cast<int64_t>(by_expert[static_cast<size_t>(ex)].size());
        source->begin_step(w, tokens_per_expert);
    }
    int64_t row = 0;
    for (int64_t ex = 0; ex < n_exp; ++ex) {
        const auto& routed = by_expert[static_cast<size_t>(ex)];
        if (routed.empty()) continue;
        const int64_t m = static_cast<int64_t>(routed.size());
        for (int64_t i = 0; i < m; ++i) std::copy_n(h + routed[static_cast<size_t>(i)].first * e, e, gathered + (row + i) * e);
        const MoeExpertMatrices mx = source ? source->matrices(ex) : MoeExpertMatrices{&w.gate_exps, &w.up_exps, &w.down_exps, ex};
        gate_up_jobs.push_back({mx.gate, mx.index, gathered + row * e, m, gate + row * ff});
        gate_up_jobs.push_back({mx.up, mx.index, gathered + row * e, m, up + row * ff});
        down_jobs.push_back({mx.down, mx.index, gate + row * ff, m, out + row * e});
        row += m;
    }
    cpu_matmul_grouped(gate_up_jobs, ctx);
    cpu_swiglu(gate, up, row * ff);
    cpu_matmul_grouped(down_jobs, ctx);
    if (source) source->end_step();  // the expert matrices are no longer read

    row = 0;
    for (int64_t ex = 0; ex < n_exp; ++ex) {
        for (const auto& [t, weight] : by_expert[static_cast<size_t>(ex)]) {
            float* xt = x + t * e;
            const float* o = out + row * e;
            for (int64_t d = 0; d < e; ++d) xt[d] += weight * o[d];
            ++row;
        }
    }
}

}  // namespace strata
