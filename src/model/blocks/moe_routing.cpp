#include "model/blocks/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/cpu/cpu_op_profile.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/blocks/blocks.h"

namespace strata {

namespace {

// Indices of the k largest of v[0..n), best first; ties go to the lower index.
void top_k(const float* v, int64_t n, int64_t k, std::vector<int64_t>& order) {
    order.resize(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int64_t a, int64_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
    order.resize(static_cast<size_t>(k));
}

// Each expert takes at most one pair per token: lists that can hold n_tokens pairs never grow
// during the step, and once a step of that size has run no later one allocates.
void reset(ExpertAssignments& out, int64_t n_expert, int64_t n_tokens) {
    out.resize(static_cast<size_t>(n_expert));
    for (auto& list : out) {
        list.clear();
        list.reserve(static_cast<size_t>(n_tokens));
    }
}

// The routing functions' working storage, kept per thread from call to call so that the token
// loop allocates nothing.
struct RoutingScratch {
    std::vector<float> scores, choice, group_merit, weights;
    std::vector<int64_t> order, groups, best_in_group;
    std::vector<char> keep;
};

RoutingScratch& routing_scratch() {
    thread_local RoutingScratch scratch;
    return scratch;
}

}  // namespace

void route_grouped(const float* logits, int64_t n_tokens, const GroupedRouting& p, ExpertAssignments& out) {
    STRATA_CHECK(p.n_group >= 1 && p.n_expert % p.n_group == 0, "experts must split evenly into groups");
    STRATA_CHECK(p.n_group_used >= 1 && p.n_group_used <= p.n_group, "more groups used than exist");
    STRATA_CHECK(p.n_used <= p.n_group_used * (p.n_expert / p.n_group), "fewer eligible experts than used");
    reset(out, p.n_expert, n_tokens);
    const int64_t per_group = p.n_expert / p.n_group;
    RoutingScratch& r = routing_scratch();
    std::vector<float>& scores = r.scores;
    std::vector<float>& choice = r.choice;
    std::vector<float>& group_merit = r.group_merit;
    scores.resize(static_cast<size_t>(p.n_expert));
    choice.resize(static_cast<size_t>(p.n_expert));
    group_merit.resize(static_cast<size_t>(p.n_group));
    std::vector<int64_t>& order = r.order;
    std::vector<int64_t>& groups = r.groups;
    std::vector<int64_t>& best_in_group = r.best_in_group;
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* l = logits + t * p.n_expert;
        if (p.sigmoid) {
            for (int64_t i = 0; i < p.n_expert; ++i) scores[static_cast<size_t>(i)] = 1.0f / (1.0f + std::exp(-l[i]));
        } else {
            std::copy_n(l, p.n_expert, scores.begin());
            cpu_softmax(scores.data(), p.n_expert);
        }
        for (int64_t i = 0; i < p.n_expert; ++i) {
            choice[static_cast<size_t>(i)] = scores[static_cast<size_t>(i)] + (p.selection_bias ? p.selection_bias[i] : 0.0f);
        }
        if (p.n_group > 1 && p.n_group_used < p.n_group) {
            for (int64_t g = 0; g < p.n_group; ++g) {
                const float* cg = choice.data() + g * per_group;
                const int64_t top = std::min<int64_t>(2, per_group);
                top_k(cg, per_group, top, best_in_group);
                float merit = 0.0f;
                for (int64_t i : best_in_group) merit += cg[i];
                group_merit[static_cast<size_t>(g)] = merit;
            }
            top_k(group_merit.data(), p.n_group, p.n_group_used, groups);
            std::vector<char>& keep = r.keep;
            keep.assign(static_cast<size_t>(p.n_group), 0);
            for (int64_t g : groups) keep[static_cast<size_t>(g)] = 1;
            // Excluded experts can never be chosen (DeepSeek's reference and llama.cpp mask with
            // -inf; HF fills 0.0, which differs only if an eligible biased score is negative).
            for (int64_t i = 0; i < p.n_expert; ++i) {
                if (!keep[static_cast<size_t>(i / per_group)]) choice[static_cast<size_t>(i)] = -INFINITY;
            }
        }
        top_k(choice.data(), p.n_expert, p.n_used, order);
        float sum = 0.0f;
        for (int64_t e : order) sum += scores[static_cast<size_t>(e)];
        const float norm = p.normalize ? 1.0f / (sum + 1e-20f) : 1.0f;
        for (int64_t e : order) {
            out[static_cast<size_t>(e)].emplace_back(t, scores[static_cast<size_t>(e)] * norm * p.scale);
        }
    }
}

void route_softmax_topk(float* logits, int64_t n_tokens, int64_t n_expert, int64_t k, bool normalize, int32_t* ids,
                        float* weights) {
    std::vector<int64_t>& order = routing_scratch().order;
    order.resize(static_cast<size_t>(n_expert));
    for (int64_t t = 0; t < n_tokens; ++t) {
        float* p = logits + t * n_expert;
        cpu_softmax(p, n_expert);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        float sum = 0.0f;
        for (int64_t j = 0; j < k; ++j) sum += p[order[static_cast<size_t>(j)]];
        for (int64_t j = 0; j < k; ++j) {
            const int64_t ex = order[static_cast<size_t>(j)];
            ids[t * k + j] = static_cast<int32_t>(ex);
            weights[t * k + j] = normalize ? p[ex] / sum : p[ex];
        }
    }
}

bool route_sqrt_softplus(const float* logits, int64_t n_tokens, const SqrtSoftplusRouting& p, ExpertAssignments& out) {
    reset(out, p.n_expert, n_tokens);
    RoutingScratch& r = routing_scratch();
    std::vector<float>& scores = r.scores;
    std::vector<float>& choice = r.choice;
    std::vector<int64_t>& order = r.order;
    scores.resize(static_cast<size_t>(p.n_expert));
    choice.resize(static_cast<size_t>(p.n_expert));
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* l = logits + t * p.n_expert;
        for (int64_t i = 0; i < p.n_expert; ++i) {
            // torch's softplus: x itself above 20, where log1p(exp(x)) equals x in f32.
            const float softplus = l[i] > 20.0f ? l[i] : std::log1p(std::exp(l[i]));
            scores[static_cast<size_t>(i)] = std::sqrt(softplus);
        }
        if (p.hash_ids) {
            order.resize(static_cast<size_t>(p.n_used));
            for (int64_t j = 0; j < p.n_used; ++j) {
                const int32_t id = p.hash_ids[t * p.n_used + j];
                if (id < 0 || id >= p.n_expert) return false;
                order[static_cast<size_t>(j)] = id;
            }
        } else {
            for (int64_t i = 0; i < p.n_expert; ++i) {
                choice[static_cast<size_t>(i)] = scores[static_cast<size_t>(i)] + (p.selection_bias ? p.selection_bias[i] : 0.0f);
            }
            top_k(choice.data(), p.n_expert, p.n_used, order);
        }
        float sum = 0.0f;
        for (int64_t e : order) sum += scores[static_cast<size_t>(e)];
        const float norm = p.normalize ? 1.0f / (sum + 1e-20f) : 1.0f;
        for (int64_t e : order) {
            out[static_cast<size_t>(e)].emplace_back(t, scores[static_cast<size_t>(e)] * norm * p.scale);
        }
    }
    return true;
}

void route_topk_softmax(const float* logits, int64_t n_tokens, int64_t n_expert, int64_t k, ExpertAssignments& out) {
    reset(out, n_expert, n_tokens);
    RoutingScratch& r = routing_scratch();
    std::vector<int64_t>& order = r.order;
    std::vector<float>& weights = r.weights;
    weights.resize(static_cast<size_t>(k));
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* l = logits + t * n_expert;
        top_k(l, n_expert, k, order);
        for (int64_t j = 0; j < k; ++j) weights[static_cast<size_t>(j)] = l[order[static_cast<size_t>(j)]];
        cpu_softmax(weights.data(), k);
        for (int64_t j = 0; j < k; ++j) out[static_cast<size_t>(order[static_cast<size_t>(j)])].emplace_back(t, weights[static_cast<size_t>(j)]);
    }
}

namespace {

// gpt-oss's GptOssExperts: the gate is clamped from above only, the up projection both ways,
// and the "+ 1" on up lets a zero up pass the gate through.
void clamped_swiglu(float* gate, const float* up, int64_t n) {
    constexpr float kAlpha = 1.702f, kLimit = 7.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float g = std::min(gate[i], kLimit);
        const float u = std::clamp(up[i], -kLimit, kLimit);
        gate[i] = g / (1.0f + std::exp(-kAlpha * g)) * (u + 1.0f);
    }
}

// DeepSeek-V4's (HF DeepseekV4Experts._apply_gate, DeepseekV4MLP): the gate clamped from above,
// the up projection both ways, then plain SwiGLU.
void limited_swiglu(float* gate, const float* up, int64_t n, float limit) {
    for (int64_t i = 0; i < n; ++i) {
        const float g = std::min(gate[i], limit);
        const float u = std::clamp(up[i], -limit, limit);
        gate[i] = g / (1.0f + std::exp(-g)) * u;
    }
}

}  // namespace

void apply_expert_activation(ExpertActivation act, float* gate, const float* up, int64_t n, float limit) {
    switch (act) {
        case ExpertActivation::SwiGlu: cpu_swiglu(gate, up, n); return;
        case ExpertActivation::GptOssClampedSwiGlu: clamped_swiglu(gate, up, n); return;
        case ExpertActivation::ClampedSwiGlu: limited_swiglu(gate, up, n, limit); return;
    }
}

namespace {

// apply_routed_experts' working storage, kept per thread from call to call (no allocation once
// a step of the same size has run).
struct ExpertPassScratch {
    std::vector<int64_t> tokens_per_expert;
    std::vector<int32_t> rows;  // the token of each (expert, token) pair, grouped by expert
    std::vector<MatmulJob> gate_up_jobs, down_jobs;
    // Each token's pairs (its rows of the expert outputs, in expert order), for the weighted sum.
    std::vector<int64_t> token_first;  // token t's pairs are [token_first[t], token_first[t + 1])
    std::vector<int64_t> token_filled;
    struct Pair {
        int64_t row;
        int64_t expert;
        float weight;
    };
    std::vector<Pair> token_pairs;
};

// Values of the weighted sum below which it stays on the calling thread (a decode step's k rows).
constexpr int64_t kParallelSumValues = 64 * 1024;

// x[t] += Σ over token t's pairs of weight · (expert output row [+ the expert's down bias]), the
// pairs in expert order as routed lists them. Split by tokens over the pool for a prompt batch:
// each token's sum is the same sequence of operations wherever it runs, so the bits are too.
void add_weighted_expert_outputs(const RoutedExpertWeights& w, const ExpertAssignments& routed, float* out, int64_t e,
                                 int64_t n_tokens, float* x, ExpertPassScratch& s, CpuContext& ctx) {
    s.token_first.assign(static_cast<size_t>(n_tokens + 1), 0);
    for (const auto& list : routed) {
        for (const auto& [t, weight] : list) ++s.token_first[static_cast<size_t>(t) + 1];
    }
    for (int64_t t = 0; t < n_tokens; ++t) s.token_first[static_cast<size_t>(t + 1)] += s.token_first[static_cast<size_t>(t)];
    s.token_pairs.resize(static_cast<size_t>(s.token_first[static_cast<size_t>(n_tokens)]));
    s.token_filled.assign(static_cast<size_t>(n_tokens), 0);
    int64_t row = 0;
    for (int64_t ex = 0; ex < static_cast<int64_t>(routed.size()); ++ex) {
        for (const auto& [t, weight] : routed[static_cast<size_t>(ex)]) {
            const size_t slot = static_cast<size_t>(s.token_first[static_cast<size_t>(t)] + s.token_filled[static_cast<size_t>(t)]++);
            s.token_pairs[slot] = {row++, ex, weight};
        }
    }
    const auto sum_tokens = [&](int64_t t0, int64_t t1, int) {
        for (int64_t t = t0; t < t1; ++t) {
            float* xt = x + t * e;
            for (int64_t i = s.token_first[static_cast<size_t>(t)]; i < s.token_first[static_cast<size_t>(t + 1)]; ++i) {
                const ExpertPassScratch::Pair& p = s.token_pairs[static_cast<size_t>(i)];
                float* o = out + p.row * e;
                if (w.down_bias) cpu_add_bias(o, w.down_bias.f32() + p.expert * e, 1, e);
                for (int64_t d = 0; d < e; ++d) xt[d] += p.weight * o[d];
            }
        }
    };
    if (static_cast<int64_t>(s.token_pairs.size()) * e < kParallelSumValues || ctx.pool().size() == 1) {
        sum_tokens(0, n_tokens, 0);
    } else {
        ctx.pool().parallel_for(n_tokens, sum_tokens);
    }
}

ExpertPassScratch& expert_pass_scratch() {
    thread_local ExpertPassScratch scratch;
    return scratch;
}

}  // namespace

// Every (token, expert) pair gets a row of the gate, up and expert-output buffers, grouped by
// expert so that each expert's matrices are read once per batch. All gate/up products run in
// one grouped pass over the thread pool, then all down products in another: at batch 1 the
// synchronizations, not the arithmetic, would otherwise dominate. The jobs name their tokens'
// rows of h rather than copies of them, so the batch is quantized once for all experts.
void apply_routed_experts(const RoutedExpertWeights& w, ExpertActivation act, const float* h, int64_t n_tokens,
                          int64_t n_embd, const ExpertAssignments& routed, float* x, CpuContext& ctx,
                          MoeExpertSource* source) {
    CpuOpScope profile_scope("moe experts (gather, sum)");
    using namespace block_slots;
    const int64_t e = n_embd, ff = w.gate_exps.ne[1];
    ExpertPassScratch& s = expert_pass_scratch();
    int64_t pairs = 0;
    for (const auto& list : routed) pairs += static_cast<int64_t>(list.size());
    float* gate = ctx.scratch_floats(kGate, static_cast<size_t>(pairs * ff));
    float* up = ctx.scratch_floats(kUp, static_cast<size_t>(pairs * ff));
    float* out = ctx.scratch_floats(kExpertOut, static_cast<size_t>(pairs * e));
    s.rows.resize(static_cast<size_t>(pairs));  // sized before the jobs point into it
    // The source identifies the layer by its stacked tensors (the MoeFfnWeights view); norm and
    // router are not part of this pass.
    MoeFfnWeights layer;
    if (source) {
        layer.gate_exps = w.gate_exps, layer.up_exps = w.up_exps, layer.down_exps = w.down_exps;
        s.tokens_per_expert.resize(routed.size());
        for (size_t ex = 0; ex < routed.size(); ++ex) s.tokens_per_expert[ex] = static_cast<int64_t>(routed[ex].size());
        source->begin_step(layer, s.tokens_per_expert);
    }
    s.gate_up_jobs.clear(), s.down_jobs.clear();
    int64_t row = 0;
    for (int64_t ex = 0; ex < static_cast<int64_t>(routed.size()); ++ex) {
        const auto& list = routed[static_cast<size_t>(ex)];
        if (list.empty()) continue;
        const int64_t m = static_cast<int64_t>(list.size());
        for (int64_t i = 0; i < m; ++i) s.rows[static_cast<size_t>(row + i)] = static_cast<int32_t>(list[static_cast<size_t>(i)].first);
        const int32_t* tokens = s.rows.data() + row;
        const MoeExpertMatrices mx = source ? source->matrices(ex) : MoeExpertMatrices{&w.gate_exps, &w.up_exps, &w.down_exps, ex};
        s.gate_up_jobs.push_back({mx.gate, mx.index, h, m, gate + row * ff, tokens, n_tokens});
        s.gate_up_jobs.push_back({mx.up, mx.index, h, m, up + row * ff, tokens, n_tokens});
        s.down_jobs.push_back({mx.down, mx.index, gate + row * ff, m, out + row * e});
        row += m;
    }
    cpu_matmul_grouped(s.gate_up_jobs, ctx);
    if (w.gate_bias || w.up_bias) {
        row = 0;
        for (int64_t ex = 0; ex < static_cast<int64_t>(routed.size()); ++ex) {
            const int64_t m = static_cast<int64_t>(routed[static_cast<size_t>(ex)].size());
            if (w.gate_bias) cpu_add_bias(gate + row * ff, w.gate_bias.f32() + ex * ff, m, ff);
            if (w.up_bias) cpu_add_bias(up + row * ff, w.up_bias.f32() + ex * ff, m, ff);
            row += m;
        }
    }
    apply_expert_activation(act, gate, up, pairs * ff, w.swiglu_limit);
    cpu_matmul_grouped(s.down_jobs, ctx);
    if (source) source->end_step();  // the expert matrices are no longer read
    add_weighted_expert_outputs(w, routed, out, e, n_tokens, x, s, ctx);
}

}  // namespace strata
