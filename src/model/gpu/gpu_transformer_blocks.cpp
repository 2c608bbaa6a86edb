// The blocks more than one GPU architecture queues (gpu_transformer.h): grouped-query attention
// with the cache, the dense SwiGLU FFN and the routed experts (all in VRAM, or through the expert
// tiers). CPU references: model/blocks/attention_block.cpp, ffn_blocks.cpp, moe_routing.cpp.
#include <cmath>

#include "backend/gpu/gpu_ops_delta_net.h"
#include "backend/gpu/gpu_routed_experts.h"
#include "model/gpu/gpu_transformer.h"

namespace strata::gpu {

namespace {
// The fused one-token router kernel (gpu_moe_router_route_plan_single) reads the router's rows in
// whole 32-value blocks; a hidden size that is not one (a float router of 200 values, which a GGUF
// may hold) takes the router's matmul and the routing kernel instead of an internal error.
bool router_fuses(const DeviceWeight& router) { return router.ne[0] % 32 == 0; }
}  // namespace

// x += attn(h), h = norm(x) on entry, as attention_block; leaves h = ffn_norm(x).
void GpuTransformer::attention(const GpuAttentionWeights& w, float* x, float* h, int64_t n, const int32_t* positions,
                               int64_t layer, const float* ffn_norm) {
    const ModelConfig& c = config_;
    float* proj = attention_part(w, h, n, positions, layer);
    op("add_rms_norm ffn_norm", [&] { gpu_add_rms_norm(x, proj, ffn_norm, n, c.n_embd, c.rms_eps, h, cur_->ctx(), hq_); });
}

float* GpuTransformer::attention_part(const GpuAttentionWeights& w, float* h, int64_t n, const int32_t* positions,
                                      int64_t layer) {
    const ModelConfig& c = config_;
    GpuContext& g = cur_->ctx();
    const int64_t e = c.n_embd, q_dim = heads() * c.head_dim_k, k_dim = heads_kv() * c.head_dim_k,
                  v_dim = heads_kv() * c.head_dim_v;
    float* q = g.scratch_floats(kQ, static_cast<uint64_t>(n * q_dim));
    float* k = g.scratch_floats(kK, static_cast<uint64_t>(n * k_dim));
    float* v = g.scratch_floats(kV, static_cast<uint64_t>(n * v_dim));
    const GpuMatvecOut qkv[] = {{&w.wq, q}, {&w.wk, k}, {&w.wv, v}};
    bool fused = false;
    if (hq_) op("matmul attn_qkv", [&] { fused = gpu_matvec_q8_many(qkv, 3, *hq_, n, g); });
    if (!fused) {
        op("matmul attn_q", [&] { gpu_matmul(w.wq, 0, h, n, q, g, hq_); });
        op("matmul attn_k", [&] { gpu_matmul(w.wk, 0, h, n, k, g, hq_); });
        op("matmul attn_v", [&] { gpu_matmul(w.wv, 0, h, n, v, g, hq_); });
    }
    if (w.bq) op("add_bias", [&] { gpu_add_bias(q, w.bq.f32(), n, q_dim, g); });
    if (w.bk) op("add_bias", [&] { gpu_add_bias(k, w.bk.f32(), n, k_dim, g); });
    if (w.bv) op("add_bias", [&] { gpu_add_bias(v, w.bv.f32(), n, v_dim, g); });
    float* proj = g.scratch_floats(kProj, static_cast<uint64_t>(n * e));
    attend_and_project(w, q, k, v, n, positions, layer, rope_params(c.rope_dims), nullptr, proj);
    return proj;
}

GpuRope GpuTransformer::rope_params(int64_t rope_dims) const {
    const ModelConfig& c = config_;
    GpuRope rope{c.rope_style == RopeStyle::Neox, c.head_dim_k, rope_dims, c.rope_base};
    if (!rope_freq_.empty()) rope.inv_freq = rope_freq_[cur_index_], rope.attn_factor = rope_.attn_factor;
    return rope;
}

void GpuTransformer::attend_and_project(const GpuAttentionWeights& w, float* q, const float* k, const float* v,
                                        int64_t n, const int32_t* positions, int64_t layer, const GpuRope& rope,
                                        const float* gate, float* proj, const GpuKeySelection* selection) {
    const ModelConfig& c = config_;
    GpuContext& g = cur_->ctx();
    const int64_t q_dim = heads() * c.head_dim_k, k_dim = heads_kv() * c.head_dim_k, v_dim = heads_kv() * c.head_dim_v;
    const int64_t attn_width = heads() * c.head_dim_v;
    float* attn = g.scratch_floats(kAttnOut, static_cast<uint64_t>(n * attn_width));
    GpuAttentionParams ap;
    ap.n_head = heads(), ap.n_head_kv = heads_kv(), ap.head_dim_k = c.head_dim_k, ap.head_dim_v = c.head_dim_v;
    ap.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim_k));
    ap.sinks = w.sinks ? w.sinks.f32() : nullptr;
    ap.sliding_window = w.sliding ? c.sliding_window : 0;
    // Small steps: the attention kernels may write attn quantized for the output projection too
    // (not when a gate scales it afterwards).
    GpuQ8Rows aq;
    bool attn_quantized = true;
    if (hq_ && !gate && attn_width % 32 == 0) aq = gpu_q8_view(g.scratch(kQ8Attn, gpu_q8_bytes(n, attn_width)), n, attn_width);
    // Each sequence's rows against its own cache.
    for (const SeqRows& s : seqs_) {
        GpuKvCache& cache = cache_of(s);
        float* qs = q + s.first * q_dim;
        const int32_t* pos = positions + s.first;
        op("qk_norm_rope_store", [&] {
            gpu_qk_norm_rope_store(qs, k + s.first * k_dim, v + s.first * v_dim, s.n, heads(),
                                   w.q_norm ? w.q_norm.f32() : nullptr, w.k_norm ? w.k_norm.f32() : nullptr, c.rms_eps,
                                   rope, pos, cache, layer, g);
        });
        const GpuQ8Rows aq_rows = aq.q ? gpu_q8_rows_from(aq, s.first) : GpuQ8Rows{};
        if (selection) {
            GpuKeySelection rows = *selection;
            rows.blocks += s.first * rows.keep;
            op("qsa_attention", [&] { gpu_qsa_attention(qs, cache, layer, s.n, pos, ap, rows, attn + s.first * attn_width, g); });
            attn_quantized = false;
            continue;
        }
        op("attention", [&] {
            attn_quantized = gpu_attention_at(qs, cache, layer, s.n, pos, ap, attn + s.first * attn_width, g,
                                              aq.q ? &aq_rows : nullptr) &&
                             attn_quantized;
        });
    }
    attn_quantized = attn_quantized && aq.q;
    if (gate) op("mul_sigmoid attn_gate", [&] { gpu_mul_sigmoid(attn, gate, n * attn_width, g); });
    const GpuQ8Rows* aq_used = attn_quantized ? &aq : quantized(attn, n, attn_width, n, kQ8Attn, aq);
    op("matmul attn_output", [&] { gpu_matmul(w.wo, 0, attn, n, proj, g, aq_used); });
    if (w.bo) op("add_bias", [&] { gpu_add_bias(proj, w.bo.f32(), n, c.n_embd, g); });
}

void GpuTransformer::dense_ffn(const GpuDenseFfnWeights& L, float* x, float* h, int64_t n, const float* next_norm) {
    const ModelConfig& c = config_;
    float* out = dense_ffn_part(L, h, n);
    op("add_rms_norm next", [&] { gpu_add_rms_norm(x, out, next_norm, n, c.n_embd, c.rms_eps, h, cur_->ctx(), hq_); });
}

namespace {

struct FfnSlotsAndNames {
    int gate, up, out, q8;
    const char *fused, *matmul_gate, *matmul_up, *swiglu, *matmul_down;
};
constexpr FfnSlotsAndNames kDenseFfn{kGate, kUp, kProj, kQ8Gate,
                                     "matmul ffn_gate_up_swiglu", "matmul ffn_gate", "matmul ffn_up", "swiglu",
                                     "matmul ffn_down"};
constexpr FfnSlotsAndNames kSharedExpertsFfn{kSharedGate, kSharedUp, kSharedOut, kQ8Shared,
                                             "matmul ffn_shexp_gate_up_swiglu", "matmul ffn_gate_shexp",
                                             "matmul ffn_up_shexp", "swiglu", "matmul ffn_down_shexp"};

}  // namespace

float* GpuTransformer::swiglu_ffn(const GpuDenseFfnWeights& L, const float* h, int64_t n, FfnRole role) {
    const FfnSlotsAndNames& r = role == FfnRole::Dense ? kDenseFfn : kSharedExpertsFfn;
    GpuContext& g = cur_->ctx();
    const int64_t e = config_.n_embd, ff = L.gate.ne[1];
    float* gate = g.scratch_floats(r.gate, static_cast<uint64_t>(n * ff));
    float* up = g.scratch_floats(r.up, static_cast<uint64_t>(n * ff));
    bool fused = false;
    if (hq_) op(r.fused, [&] { fused = gpu_matvec_q8_swiglu(L.gate, L.up, *hq_, n, gate, g); });
    if (!fused) {
        op(r.matmul_gate, [&] { gpu_matmul(L.gate, 0, h, n, gate, g, hq_); });
        op(r.matmul_up, [&] { gpu_matmul(L.up, 0, h, n, up, g, hq_); });
        op(r.swiglu, [&] { gpu_swiglu(gate, up, n * ff, g); });
    }
    float* out = g.scratch_floats(r.out, static_cast<uint64_t>(n * e));
    GpuQ8Rows gq;
    const GpuQ8Rows* gq_used = quantized(gate, n, ff, n, r.q8, gq);
    op(r.matmul_down, [&] { gpu_matmul(L.down, 0, gate, n, out, g, gq_used); });
    return out;
}

void GpuTransformer::moe_ffn(const GpuMoeWeights& L, int64_t layer, float* x, float* h, int64_t n, const float* next_norm,
                             CpuContext& cpu) {
    const ModelConfig& c = config_;
    GpuContext& g = cur_->ctx();
    const int64_t e = c.n_embd, n_exp = c.n_expert, k = c.n_expert_used;
    const int64_t pairs = n * k;
    float* router = g.scratch_floats(kRouter, static_cast<uint64_t>(n * n_exp));
    // The routing's ids and weights side by side (then the next layer's predicted ones, for the
    // tiers), so that the tiers fetch them in one copy.
    auto* ids = static_cast<int32_t*>(g.scratch(kExpertIds, static_cast<uint64_t>(pairs) * 2 * (sizeof(int32_t) + sizeof(float))));
    auto* weights = reinterpret_cast<float*>(ids + pairs);
    if (static_cast<size_t>(layer) >= seen_routers_.size()) {
        seen_routers_.resize(static_cast<size_t>(layer) + 1);
        seen_router_biases_.resize(static_cast<size_t>(layer) + 1);
    }
    seen_routers_[static_cast<size_t>(layer)] = L.router;
    seen_router_biases_[static_cast<size_t>(layer)] = L.router_bias;
    // One token: router, routing and plan in one launch (the tiers make their own plan).
    RoutedExperts* routed = cur_->routed();
    const bool fused_routing =
        n == 1 && !L.router_bias && !custom_routing_ && cur_->route_counter(layer) != nullptr && router_fuses(L.router);
    if (!fused_routing) op("matmul ffn_gate_inp", [&] { gpu_matmul(L.router, 0, h, n, router, g, hq_); });
    if (L.router_bias) op("add_bias", [&] { gpu_add_bias(router, L.router_bias.f32(), n, n_exp, g); });
    // gpt-oss takes the softmax of the top k logits: the top k of the softmax, renormalized.
    const bool normalize = c.norm_topk_prob || gpt_oss_;
    if (routed) {  // experts not all in VRAM: the tiers compute them (GPU hits, CPU, streamed)
        if (fused_routing) {
            op("moe_router_route_plan_single", [&] {
                gpu_moe_router_route_plan_single(L.router, h, router, k, normalize, ids, weights, kMoePlan,
                                                 cur_->route_counter(layer), g);
            });
        } else if (custom_routing_) {
            route_experts(layer, router, n, ids, weights);
        } else {
            op("moe_route", [&] { gpu_moe_route_softmax_topk(router, n, n_exp, k, normalize, ids, weights, g); });
        }
        RoutedExpertsStep step{layer, n, e, k, h, hq_, ids, weights, x, next_norm, c.rms_eps, h, hq_};
        // The tiers queue the prediction themselves, behind the routing's trip to the host: the
        // next layer's router is then off the path from this layer's router to its CPU lane.
        const int64_t next = n == 1 && routed->predicts_next_layer() ? next_predictable_layer(layer) : -1;
        const auto queue = [&] { predict_next_experts(next, h, k, ids + 2 * pairs); };
        const FunctionRef<void()> predict = queue;  // refers to `queue`, which outlives the step
        if (next >= 0) {
            step.predicted_ids = ids + 2 * pairs;
            step.predicted_layer = next;
            step.queue_prediction = &predict;
        }
        op("routed_experts", [&] { routed->forward(step, g, cpu); });
        return;
    }
    MoePlan plan;
    if (fused_routing) {
        op("moe_router_route_plan_single", [&] {
            plan = gpu_moe_router_route_plan_single(L.router, h, router, k, normalize, ids, weights, kMoePlan,
                                                         cur_->route_counter(layer), g);
        });
    } else if (custom_routing_) {
        route_experts(layer, router, n, ids, weights);
        op("moe_plan", [&] {
            plan = gpu_moe_plan(ids, pairs, n_exp, kMoePlan, g,
                                gpu_moe_tile_columns(pairs, n_exp, L.gate_exps, L.down_exps));
        });
    } else if (n == 1) {  // one token: k distinct experts, a plan of fixed shape, written by the routing
        op("moe_route_plan_single", [&] {
            plan = gpu_moe_route_plan_single(router, n_exp, k, normalize, ids, weights, kMoePlan, g);
        });
    } else {
        op("moe_route", [&] { gpu_moe_route_softmax_topk(router, n, n_exp, k, normalize, ids, weights, g); });
        op("moe_plan", [&] {
            plan = gpu_moe_plan(ids, pairs, n_exp, kMoePlan, g,
                                     gpu_moe_tile_columns(pairs, n_exp, L.gate_exps, L.down_exps));
        });
    }
    const float* out = expert_products(L, plan, ids, h, n);
    op("moe_combine_rms_norm next", [&] {
        gpu_moe_combine_rms_norm(out, weights, n, k, e, x, next_norm, c.rms_eps, h, g, hq_);
    });
}

// The next MoE layer on this GPU whose router a one-token step can run on this layer's h (known
// once a forward has passed it), or -1. Consecutive layers' inputs differ by one block's update of
// the residual stream, so its routing of this h is often what it will pick for its own.
int64_t GpuTransformer::next_predictable_layer(int64_t layer) {
    for (auto next = static_cast<size_t>(layer) + 1; next < seen_routers_.size() && next < cur_->layer_end(); ++next) {
        if (!seen_routers_[next]) continue;
        const bool plain = !seen_router_biases_[next] && !custom_routing_;
        if (plain && !cur_->route_counter(static_cast<int64_t>(next))) return -1;
        return static_cast<int64_t>(next);
    }
    return -1;
}

// Queues the experts MoE layer `next` would route this one-token h to, by its router and its
// routing, into `out` (k ids, then k weights) for the tiers to copy ahead. A plain softmax router
// takes one launch; gpt-oss's router bias and DeepSeek's grouped routing (route_experts) take the
// product, the bias and their routing as the layer itself will run them.
void GpuTransformer::predict_next_experts(int64_t next, const float* h, int64_t k, int32_t* out) {
    GpuContext& g = cur_->ctx();
    const DeviceWeight& router = seen_routers_[static_cast<size_t>(next)];
    const DeviceWeight& bias = seen_router_biases_[static_cast<size_t>(next)];
    // The current layer's routing has read its logits (queued before): the slot is free.
    float* logits = g.scratch_floats(kRouter, static_cast<uint64_t>(router.ne[1]));
    auto* weights = reinterpret_cast<float*>(out + k);
    if (bias || custom_routing_ || !router_fuses(router)) {
        op("moe_predict_next", [&] {
            gpu_matmul(router, 0, h, 1, logits, g, hq_);
            if (bias) gpu_add_bias(logits, bias.f32(), 1, router.ne[1], g);
            if (!custom_routing_) gpu_moe_route_softmax_topk(logits, 1, router.ne[1], k, false, out, weights, g);
        });
        if (custom_routing_) route_experts(next, logits, 1, out, weights);
    } else {
        op("moe_predict_next", [&] {
            gpu_moe_router_route_plan_single(router, h, logits, k, false, out, weights, kMoePlan, cur_->route_counter(next), g);
        });
    }
}

// Gate, up, activation and down of every pair of the plan (biases where gpt-oss has them): one
// output row of n_embd per (token, slot) pair, in kExpertOut; rows of pairs outside the plan are
// left as they were.
const float* GpuTransformer::expert_products(const GpuMoeWeights& L, const MoePlan& plan, const int32_t* ids,
                                             const float* h, int64_t n) {
    const ModelConfig& c = config_;
    GpuContext& g = cur_->ctx();
    const int64_t e = c.n_embd, k = c.n_expert_used, pairs = n * k;
    const int64_t ff = L.gate_exps.ne[1];
    float* gate = g.scratch_floats(kExpertGate, static_cast<uint64_t>(pairs * ff));
    float* up = g.scratch_floats(kExpertUp, static_cast<uint64_t>(pairs * ff));
    // Narrow tiles take the int8 matrix-vector kernel (gate, up and swiglu in one launch when the
    // weights allow); wide ones the int8 MMQ tiles where the device has them (hq_ is set then),
    // else the float tiles.
    const bool narrow = plan.tile_columns == kGpuMatmulColumns;
    const GpuQ8Rows* hx = hq_;
    const bool biased = L.gate_bias || L.up_bias || gpt_oss_;
    const GpuExpertActivation act = gpt_oss_ ? GpuExpertActivation::GptOssClampedSwiGlu : GpuExpertActivation::SwiGlu;
    bool fused = false;
    if (hx && narrow && !biased) {
        op("matmul_experts gate_up_swiglu", [&] {
            fused = gpu_matvec_q8_swiglu_experts(L.gate_exps, L.up_exps, plan, *hx, MoeRows::Pair, k, gate,
                                                      MoeRows::Pair, g);
        });
    }
    if (!fused) {
        op("matmul_experts gate", [&] { gpu_matmul_experts(L.gate_exps, plan, h, k, gate, g, hx); });
        op("matmul_experts up", [&] { gpu_matmul_experts(L.up_exps, plan, h, k, up, g, hx); });
        if (biased) {
            op("moe_bias_activation", [&] {
                gpu_moe_bias_activation(gate, up, ids, pairs, ff, L.gate_bias ? L.gate_bias.f32() : nullptr,
                                             L.up_bias ? L.up_bias.f32() : nullptr, act, g);
            });
        } else {
            op("swiglu", [&] { gpu_swiglu(gate, up, pairs * ff, g); });
        }
    }
    float* out = g.scratch_floats(kExpertOut, static_cast<uint64_t>(pairs * e));
    GpuQ8Rows gq;
    const GpuQ8Rows* gq_used = quantized(gate, pairs, ff, n, kQ8Gate, gq);
    op("matmul_experts down", [&] { gpu_matmul_experts(L.down_exps, plan, gate, 1, out, g, gq_used); });
    if (L.down_bias) op("moe_add_expert_bias", [&] { gpu_moe_add_expert_bias(out, ids, pairs, e, L.down_bias.f32(), g); });
    return out;
}

float* GpuTransformer::moe_ffn_part(const GpuMoeWeights& L, int64_t layer, float* h, int64_t n) {
    const ModelConfig& c = config_;
    GpuContext& g = cur_->ctx();
    const int64_t e = c.n_embd, n_exp = c.n_expert, k = c.n_expert_used, pairs = n * k;
    float* router = g.scratch_floats(kRouter, static_cast<uint64_t>(n * n_exp));
    auto* ids = static_cast<int32_t*>(g.scratch(kExpertIds, static_cast<uint64_t>(pairs) * sizeof(int32_t)));
    float* weights = g.scratch_floats(kExpertWeights, static_cast<uint64_t>(pairs));
    // Every rank routes every token alike (the same h bits, the same router), and keeps its experts.
    const std::pair<int64_t, int64_t> range = expert_range(rank());
    const int64_t e0 = range.first, e1 = range.second;
    const bool normalize = c.norm_topk_prob || gpt_oss_;
    MoePlan plan;
    if (n == 1 && !L.router_bias && !custom_routing_ && cur_->route_counter(layer) != nullptr &&
        router_fuses(L.router)) {  // one launch, as on one GPU
        op("moe_router_route_plan_single", [&] {
            plan = gpu_moe_router_route_plan_single(L.router, h, router, k, normalize, ids, weights, kMoePlan,
                                                    cur_->route_counter(layer), g, e0, e1);
        });
    } else {
        op("matmul ffn_gate_inp", [&] { gpu_matmul(L.router, 0, h, n, router, g, hq_); });
        if (L.router_bias) op("add_bias", [&] { gpu_add_bias(router, L.router_bias.f32(), n, n_exp, g); });
        if (custom_routing_) {
            route_experts(layer, router, n, ids, weights);
        } else {
            op("moe_route", [&] { gpu_moe_route_softmax_topk(router, n, n_exp, k, normalize, ids, weights, g); });
        }
        op("moe_plan", [&] {
            // The tile width for the pairs this rank expects: its share of them over its experts.
            const int width = gpu_moe_tile_columns(pairs / static_cast<int64_t>(ranks()), e1 - e0, L.gate_exps, L.down_exps);
            plan = gpu_moe_plan(ids, pairs, e1 - e0, kMoePlan, g, width, e0);
        });
    }
    const float* out = expert_products(L, plan, ids, h, n);
    float* part = g.scratch_floats(kProj, static_cast<uint64_t>(n * e));
    op("moe_combine_owned", [&] { gpu_moe_combine_owned(out, weights, ids, n, k, e, e0, e1, part, g); });
    return part;
}

}  // namespace strata::gpu
