// DeepSeek-V2/V3 on the GPU (GGUF architecture "deepseek2"): the recipe of model/arch/deepseek2.cpp
// with the blocks of gpu_transformer.h, reading the same weight table (model/arch/deepseek2_weights.h).
// Per layer: multi-head latent attention in the absorbed form (one cached latent row per position,
// gpu_ops_mla.h), then the dense FFN for the leading layers, else the shared experts and the
// routed experts, chosen by the grouped routing (gpu_ops_deepseek.h) through the base class's MoE
// path, expert tiers included.
// Under --split tensor the routed experts are shared out over the ranks; the latent attention (whose
// one cached latent row per position serves every head), the leading dense FFNs and the shared
// experts stay whole on the first rank, the other ranks adding empty parts to the all-reduce.
//
// The KV cache is the base class's, made with the config's one kv head of key_length
// kv_lora_rank + rope dims and value_length kv_lora_rank: a row holds [normed latent | roped key]
// as keys and the latent again as values, which is what gpu_attention_mla reads.
#include <cmath>
#include <memory>
#include <vector>

#include "backend/gpu/gpu_ops_deepseek.h"
#include "backend/gpu/gpu_ops_mla.h"
#include "model/gpu/gpu_transformer.h"
#include "model/arch/deepseek2_weights.h"

namespace strata {

namespace {

using gpu::DeviceWeight;

// Scratch slots of these layers (after the shared ones, below the attention's slot 48).
enum DeepseekSlot : int {
    kQLatent = gpu::kFirstArchSlot, kQ8QLatent, kQAbsorbed, kValues, kQ8Values,
    kHeadPlan,                    // gpu_head_plan's three slots
    kHeadIn = kHeadPlan + 3, kHeadOut,  // gpu_matmul_heads' packed rows
    kDeepseekSlotEnd,
};
static_assert(kDeepseekSlotEnd <= gpu::kGpuAttentionScratchSlot, "deepseek2 scratch slots run into the attention's");

// Shapes as MlaAttentionWeights (GGUF order [in, out]); dk = nope + rope dims.
struct GpuMlaWeights {
    DeviceWeight q_a;        // [n_embd, q_lora_rank]          (absent: wq)
    DeviceWeight q_a_norm;   // [q_lora_rank]
    DeviceWeight q_b;        // [q_lora_rank, n_head · dk]
    DeviceWeight wq;         // [n_embd, n_head · dk]           (models without q LoRA)
    DeviceWeight kv_a;       // [n_embd, kv_lora_rank + rope]
    DeviceWeight kv_a_norm;  // [kv_lora_rank]
    DeviceWeight k_b;        // [nope, kv_lora_rank, n_head]
    DeviceWeight v_b;        // [kv_lora_rank, dv, n_head]
    DeviceWeight wo;         // [n_head · dv, n_embd]
};

struct GpuDeepseekLayer {
    DeviceWeight attn_norm, ffn_norm;  // [n_embd]
    GpuMlaWeights attn;
    bool moe = false;
    gpu::GpuDenseFfnWeights ffn;     // leading dense layers
    gpu::GpuMoeWeights experts;      // MoE layers (router; experts unless the tiers hold them)
    DeviceWeight selection_bias;     // [n_expert] exp_probs_b, optional: for the choice only
    gpu::GpuDenseFfnWeights shared;  // [n_embd, n_ff_expert · n_expert_shared]; empty without shared experts
};

class GpuDeepseek2 final : public gpu::GpuTransformer {
public:
    using GpuTransformer::GpuTransformer;

    Status load(const GgufFile& file) {
        STRATA_TRY(make_shares());
        Deepseek2Weights w;
        STRATA_TRY(load_deepseek2_weights(file, config_, w));
        const ModelConfig& c = config_;
        if (c.kv_lora_rank > gpu::kGpuMaxMlaLatent || c.rope_dims > gpu::kGpuMaxMlaRope || c.kv_lora_rank % 8 != 0 ||
            c.rope_dims % 8 != 0) {
            return Status::error("deepseek2: a kv latent of {} and a rope key of {} do not fit the GPU attention "
                                 "(multiples of 8, at most {} and {}); run with --device cpu",
                                 c.kv_lora_rank, c.rope_dims, gpu::kGpuMaxMlaLatent, gpu::kGpuMaxMlaRope);
        }
        if (c.is_moe() && c.n_expert_group > gpu::kGpuMaxExpertGroups) {
            return Status::error("deepseek2: {} expert groups are beyond the GPU routing (at most {}); run with --device cpu",
                                 c.n_expert_group, gpu::kGpuMaxExpertGroups);
        }
        const MlaRope rope = deepseek2_rope(c);
        rope_ = rope.table;  // finish_load puts its frequencies on every share
        kq_scale_ = rope.kq_scale;
        const GroupedRouting r = deepseek2_routing(c, nullptr);
        routing_ = gpu::GpuGroupedRouting{r.n_expert, r.n_used, r.n_group, r.n_group_used, r.sigmoid, nullptr,
                                          r.normalize, r.scale};
        custom_routing_ = true;
        layers_.assign(ranks(), std::vector<GpuDeepseekLayer>(w.layers.size()));
        std::vector<Weight> input_norms;
        for (size_t il = 0; il < w.layers.size(); ++il) {
            STRATA_TRY(upload_layer_parts(
                w.layers[il], il, layers_, [&](const Deepseek2Layer& src, size_t rk) { return rank_part(src, rk); },
                [&](const Deepseek2Layer& src, size_t s, GpuDeepseekLayer& L) { return upload_layer(src, s, L); }));
            input_norms.push_back(w.layers[il].attn.norm);
        }
        return finish_load(file, w.token_embd, w.output_norm, w.output, input_norms);
    }

    bool supports_tensor_split() const override { return true; }
    bool shards_attention() const override { return false; }

private:
    // Rank r's part of a layer under --split tensor: its share of the routed experts; the first
    // rank keeps the rest whole, the others only the norms, the router and the selection bias
    // (upload_layer skips empty weights).
    Result<Deepseek2Layer> rank_part(const Deepseek2Layer& src, size_t r) {
        Deepseek2Layer part = src;
        if (src.moe) STRATA_TRY(keep_rank_experts(part.moe_ffn, r));
        if (r == 0) return part;
        part.attn = MlaAttentionWeights{};
        part.attn.norm = src.attn.norm;
        part.ffn = DenseFfnWeights{};
        part.ffn.norm = src.ffn.norm;
        part.gate_sh = part.up_sh = part.down_sh = Weight{};
        return part;
    }

    Status upload_layer(const Deepseek2Layer& src, size_t share_index, GpuDeepseekLayer& L) {
        gpu::GpuShard& sh = share(share_index);
        const MlaAttentionWeights& a = src.attn;
        GpuMlaWeights& o = L.attn;
        STRATA_ASSIGN_OR_RETURN(L.attn_norm, sh.upload(a.norm, false));
        STRATA_ASSIGN_OR_RETURN(o.q_a, sh.upload(a.q_a, true));
        STRATA_ASSIGN_OR_RETURN(o.q_a_norm, sh.upload(a.q_a_norm, false));
        STRATA_ASSIGN_OR_RETURN(o.q_b, sh.upload(a.q_b, true));
        STRATA_ASSIGN_OR_RETURN(o.wq, sh.upload(a.wq, true));
        STRATA_ASSIGN_OR_RETURN(o.kv_a, sh.upload(a.kv_a, true));
        STRATA_ASSIGN_OR_RETURN(o.kv_a_norm, sh.upload(a.kv_a_norm, false));
        STRATA_ASSIGN_OR_RETURN(o.k_b, sh.upload(a.k_b, true));
        STRATA_ASSIGN_OR_RETURN(o.v_b, sh.upload(a.v_b, true));
        STRATA_ASSIGN_OR_RETURN(o.wo, sh.upload(a.wo, true));
        L.moe = src.moe;
        if (!src.moe) {
            STRATA_ASSIGN_OR_RETURN(L.ffn_norm, sh.upload(src.ffn.norm, false));
            STRATA_ASSIGN_OR_RETURN(L.ffn.gate, sh.upload(src.ffn.gate, true));
            STRATA_ASSIGN_OR_RETURN(L.ffn.up, sh.upload(src.ffn.up, true));
            STRATA_ASSIGN_OR_RETURN(L.ffn.down, sh.upload(src.ffn.down, true));
            return Status::ok();
        }
        STRATA_ASSIGN_OR_RETURN(L.ffn_norm, sh.upload(src.moe_ffn.norm, false));
        STRATA_ASSIGN_OR_RETURN(L.selection_bias, sh.upload(src.router_bias, false));
        STRATA_ASSIGN_OR_RETURN(L.shared.gate, sh.upload(src.gate_sh, true));
        STRATA_ASSIGN_OR_RETURN(L.shared.up, sh.upload(src.up_sh, true));
        STRATA_ASSIGN_OR_RETURN(L.shared.down, sh.upload(src.down_sh, true));
        // The selection bias stays out of GpuMoeWeights: its router_bias is added to the logits (gpt-oss).
        return upload_experts(src.moe_ffn, {}, share_index, L.experts);
    }

    // Layer il as the share (or rank) being queued holds it.
    const GpuDeepseekLayer& layer(uint32_t il) const { return layers_[rank()][il]; }

    const float* input_norm(uint32_t il) const override { return layer(il).attn_norm.f32(); }
    const float* ffn_norm_of(uint32_t il) const override { return layer(il).ffn_norm.f32(); }

    void queue_layer(uint32_t il, float* x, float* h, int64_t n, const int32_t* positions, int64_t kv_layer,
                     const float* next_norm, CpuContext& cpu) override {
        const GpuDeepseekLayer& L = layer(il);
        float* proj = mla_attention(L, h, n, positions, kv_layer);
        op("add_rms_norm ffn_norm", [&] {
            gpu::gpu_add_rms_norm(x, proj, L.ffn_norm.f32(), n, config_.n_embd, config_.rms_eps, h, cur_->ctx(), hq_);
        });
        if (!L.moe) {
            dense_ffn(L.ffn, x, h, n, next_norm);
            return;
        }
        if (L.shared.gate) shared_experts(L, x, h, n);
        moe_ffn(L.experts, il, x, h, n, next_norm, cpu);
    }

    float* queue_attention_part(uint32_t il, float* h, int64_t n, const int32_t* positions, int64_t kv_layer) override {
        return rank() == 0 ? mla_attention(layer(il), h, n, positions, kv_layer) : empty_part(n);
    }
    float* queue_ffn_part(uint32_t il, float* h, int64_t n, CpuContext&) override {
        const GpuDeepseekLayer& L = layer(il);
        if (!L.moe) return rank() == 0 ? dense_ffn_part(L.ffn, h, n) : empty_part(n);
        float* part = moe_ffn_part(L.experts, il, h, n);
        if (rank() == 0 && L.shared.gate) shared_experts(L, part, h, n);
        return part;
    }

    void route_experts(int64_t layer_index, const float* logits, int64_t n, int32_t* ids, float* weights) override {
        gpu::GpuGroupedRouting p = routing_;
        const DeviceWeight& bias = layer(static_cast<uint32_t>(layer_index)).selection_bias;
        p.selection_bias = bias ? bias.f32() : nullptr;
        op("moe_route_grouped", [&] { gpu::gpu_moe_route_grouped(logits, n, p, ids, weights, cur_->ctx()); });
    }

    // wo(v_b(attention over the latent cache)) of h = attn_norm(x), as mla_attention_block
    // without the residual, in scratch slot kProj.
    float* mla_attention(const GpuDeepseekLayer& L, float* h, int64_t n, const int32_t* positions, int64_t kv_layer) {
        const ModelConfig& c = config_;
        const GpuMlaWeights& w = L.attn;
        gpu::GpuContext& g = cur_->ctx();
        const int64_t e = c.n_embd, n_head = c.n_head, lora = c.kv_lora_rank, r = c.rope_dims;
        const int64_t dk = c.head_dim_k_mla, dv = c.head_dim_v_mla, latent_k = lora + r;

        // Queries (through the q LoRA and its norm when the model has one) and the kv_a rows
        // [latent | rope key]; the first products of both read h, in one launch when they can.
        float* q = g.scratch_floats(gpu::kQ, static_cast<uint64_t>(n * n_head * dk));
        float* kva = g.scratch_floats(gpu::kK, static_cast<uint64_t>(n * latent_k));
        const DeviceWeight& first_q = w.q_a ? w.q_a : w.wq;
        const int64_t q_rank = w.q_a ? w.q_a.ne[1] : 0;
        float* q_first = w.q_a ? g.scratch_floats(kQLatent, static_cast<uint64_t>(n * q_rank)) : q;
        const gpu::GpuMatvecOut outs[] = {{&first_q, q_first}, {&w.kv_a, kva}};
        bool fused = false;
        if (hq_) op("matmul attn_q_kv_a", [&] { fused = gpu::gpu_matvec_q8_many(outs, 2, *hq_, n, g); });
        if (!fused) {
            op(w.q_a ? "matmul attn_q_a" : "matmul attn_q", [&] { gpu::gpu_matmul(first_q, 0, h, n, q_first, g, hq_); });
            op("matmul attn_kv_a_mqa", [&] { gpu::gpu_matmul(w.kv_a, 0, h, n, kva, g, hq_); });
        }
        if (w.q_a) {
            gpu::GpuQ8Rows qlq_view;
            const gpu::GpuQ8Rows* qlq = nullptr;
            if (takes_int8(n, q_rank)) {
                qlq_view = gpu::gpu_q8_view(g.scratch(kQ8QLatent, gpu::gpu_q8_bytes(n, q_rank)), n, q_rank);
                qlq = &qlq_view;
            }
            op("rms_norm attn_q_a_norm",
               [&] { gpu::gpu_rms_norm(q_first, w.q_a_norm.f32(), n, q_rank, c.rms_eps, q_first, g, qlq); });
            op("matmul attn_q_b", [&] { gpu::gpu_matmul(w.q_b, 0, q_first, n, q, g, qlq); });
        }

        // Absorbed queries [n][n_head][lora + r]: q_nope · k_b per head, then the roped tail, so
        // that q_abs · cache row = q_nope · k_nope + q_rope · k_rope.
        gpu::GpuRope rope{c.rope_style == RopeStyle::Neox, latent_k, r, c.rope_base};
        if (!rope_freq_.empty()) rope.inv_freq = rope_freq_[cur_index_], rope.attn_factor = rope_.attn_factor;
        float* qa = g.scratch_floats(kQAbsorbed, static_cast<uint64_t>(n * n_head * latent_k));
        const int tile = gpu::gpu_moe_tile_columns(n * n_head, n_head, w.k_b, w.v_b);
        gpu::MoePlan heads;
        op("head_plan", [&] { heads = gpu::gpu_head_plan(n, n_head, tile, kHeadPlan, g); });
        op("matmul_heads attn_k_b", [&] { gpu::gpu_matmul_heads(w.k_b, heads, q, dk, qa, latent_k, kHeadIn, g); });
        op("mla_q_rope_absorb", [&] { gpu::gpu_mla_q_rope_absorb(q, n, n_head, dk, lora, rope, positions, qa, g); });

        // Each sequence's rows into its cache, then its queries over it: one latent per head.
        float* attn = g.scratch_floats(gpu::kAttnOut, static_cast<uint64_t>(n * n_head * lora));
        const gpu::GpuMlaParams mp{n_head, lora, r, kq_scale_};
        for (const SeqRows& s : seqs_) {
            gpu::GpuKvCache& cache = cache_of(s);
            const int32_t* pos = positions + s.first;
            op("mla_kv_norm_rope_store", [&] {
                gpu::gpu_mla_kv_norm_rope_store(kva + s.first * latent_k, s.n, lora, w.kv_a_norm.f32(), c.rms_eps, rope,
                                                pos, cache, kv_layer, g);
            });
            op("attention_mla", [&] {
                gpu::gpu_attention_mla(qa + s.first * n_head * latent_k, cache, kv_layer, s.n, pos, mp,
                                       attn + s.first * n_head * lora, g);
            });
        }

        // Each head's latent to its value (v_b), then the output projection.
        float* values = g.scratch_floats(kValues, static_cast<uint64_t>(n * n_head * dv));
        op("matmul_heads attn_v_b", [&] { gpu::gpu_matmul_heads(w.v_b, heads, attn, lora, values, dv, kHeadIn, g); });
        float* proj = g.scratch_floats(gpu::kProj, static_cast<uint64_t>(n * e));
        gpu::GpuQ8Rows vq;
        const gpu::GpuQ8Rows* vq_used = quantized(values, n, n_head * dv, n, kQ8Values, vq);
        op("matmul attn_output", [&] { gpu::gpu_matmul(w.wo, 0, values, n, proj, g, vq_used); });
        return proj;
    }

    // x += down(silu(gate h) · up h) of the shared experts, h = ffn_norm(x), which it leaves as it
    // is for the routed experts (deepseek2.cpp's moe_block reads the same h for both). x: the
    // residual, or a tensor split's FFN part.
    void shared_experts(const GpuDeepseekLayer& L, float* x, const float* h, int64_t n) {
        float* out = swiglu_ffn(L.shared, h, n, FfnRole::SharedExperts);
        op("add shexp", [&] { gpu::gpu_add(x, out, n * config_.n_embd, cur_->ctx()); });
    }

    std::vector<std::vector<GpuDeepseekLayer>> layers_;  // [rank][layer]: one rank without a tensor split
    float kq_scale_ = 1.0f;
    gpu::GpuGroupedRouting routing_;  // the config's; each layer adds its selection bias
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpu_deepseek2(const GgufFile& file, const ModelConfig& config,
                                                  const ComputeOptions& options) {
    return gpu::load_gpu_pass<GpuDeepseek2>(file, config, options);
}

}  // namespace strata
