// Qwen3-Next and Qwen3.5-MoE on the GPU: the recipe of model/arch/qwen3next.cpp — gated DeltaNet
// layers with a gated full-attention layer every few, each followed by the routed experts and a
// sigmoid-gated shared expert — with the blocks of gpu_transformer.h and the DeltaNet ops of
// gpu_ops_delta_net.h, reading the same weight table (model/arch/qwen3next_weights.h).
// The blocks and the recurrent state are gpu_hybrid.h's. The routed experts go through the same
// code as qwen3moe's, expert tiers included.
// Under --split tensor the gated attention layers share out their heads (and KV cache) and every
// layer its routed experts, as the Llama family's; the DeltaNet layers (whose recurrent state and
// short convolution run over all heads) and the shared expert stay whole on the first rank, which
// also holds every sequence's recurrent state, the other ranks adding empty parts to the
// all-reduce.
#include <deque>
#include <memory>
#include <vector>

#include "model/arch/qwen3next_weights.h"
#include "model/gpu/gpu_hybrid.h"
#include "model/weight_slices.h"

namespace strata {

namespace {

using gpu::DeviceWeight;

struct GpuHybridLayer {
    bool recurrent = false;
    DeviceWeight attn_norm;
    gpu::GpuDeltaNetWeights delta;  // recurrent layers
    gpu::GpuAttentionWeights attn;  // full-attention layers: wq is the [query | gate] projection
    DeviceWeight post_norm;
    gpu::GpuMoeWeights experts;
    gpu::GpuDenseFfnWeights shared;
    DeviceWeight shared_gate_inp;
};

class GpuHybrid final : public gpu::GpuHybridBlocks {
public:
    using GpuHybridBlocks::GpuHybridBlocks;

    Status load(const GgufFile& file) {
        STRATA_TRY(make_shares());
        HybridWeights w;
        STRATA_TRY(load_hybrid_weights(file, config_, w));
        STRATA_TRY(check_delta_net_shape());
        layers_.assign(ranks(), std::vector<GpuHybridLayer>(w.layers.size()));
        std::vector<Weight> input_norms;
        std::vector<bool> has_kv;
        for (size_t il = 0; il < w.layers.size(); ++il) {
            STRATA_TRY(upload_layer_parts(
                w.layers[il], il, layers_, [&](const HybridLayer& src, size_t r) { return rank_part(src, r); },
                [&](const HybridLayer& src, size_t s, GpuHybridLayer& L) { return upload_layer(src, s, L); }));
            const HybridLayer& L = w.layers[il];
            input_norms.push_back(L.recurrent ? L.delta.norm : L.attn.norm);
            has_kv.push_back(!L.recurrent);
        }
        set_kv_layers(has_kv);
        STRATA_TRY(finish_load(file, w.token_embd, w.output_norm, w.output, input_norms));
        column_copies_.clear();  // uploaded: finish_load waited for the copies
        return Status::ok();
    }

    bool supports_tensor_split() const override { return true; }

private:
    // Rank r's part of a layer under --split tensor: a gated attention layer's heads as the Llama
    // family's (wq's rows hold each head's query and gate together), its routed experts; the
    // first rank keeps a DeltaNet layer and the shared expert whole, the other ranks drop them
    // (upload_layer skips empty weights).
    Result<HybridLayer> rank_part(const HybridLayer& src, size_t r) {
        const ModelConfig& c = config_;
        const auto rank = static_cast<int64_t>(r);
        const int64_t hq = heads(), hk = heads_kv();
        HybridLayer out = src;
        if (!src.recurrent) {
            GatedAttentionWeights& a = out.attn;
            STRATA_ASSIGN_OR_RETURN(a.wq, weight_rows(src.attn.wq, rank * hq * 2 * c.head_dim_k, hq * 2 * c.head_dim_k));
            STRATA_ASSIGN_OR_RETURN(a.wk, weight_rows(src.attn.wk, rank * hk * c.head_dim_k, hk * c.head_dim_k));
            STRATA_ASSIGN_OR_RETURN(a.wv, weight_rows(src.attn.wv, rank * hk * c.head_dim_v, hk * c.head_dim_v));
            STRATA_ASSIGN_OR_RETURN(a.wo, weight_columns(src.attn.wo, rank * hq * c.head_dim_v, hq * c.head_dim_v,
                                                         column_copies_.emplace_back()));
        } else if (r != 0) {
            const Weight norm = src.delta.norm;
            out.delta = GatedDeltaNetWeights{};
            out.delta.norm = norm;
        }
        if (r != 0) out.shared = SharedExpertWeights{};
        STRATA_TRY(keep_rank_experts(out.moe, r));
        return out;
    }

    Status upload_layer(const HybridLayer& src, size_t share_index, GpuHybridLayer& L) {
        gpu::GpuShard& sh = share(share_index);
        L.recurrent = src.recurrent;
        if (src.recurrent) {
            STRATA_ASSIGN_OR_RETURN(L.attn_norm, sh.upload(src.delta.norm, false));
            STRATA_TRY(upload_delta_net(src.delta, sh, L.delta));
        } else {
            STRATA_ASSIGN_OR_RETURN(L.attn_norm, sh.upload(src.attn.norm, false));
            STRATA_TRY(upload_gated_attention(src.attn, sh, L.attn));
        }
        STRATA_ASSIGN_OR_RETURN(L.post_norm, sh.upload(src.moe.norm, false));
        STRATA_TRY(upload_shared_expert(src.shared, sh, L.shared, L.shared_gate_inp));
        return upload_experts(src.moe, {}, share_index, L.experts);
    }

    // Layer il as the share (or rank) being queued holds it.
    const GpuHybridLayer& layer(uint32_t il) const { return layers_[rank()][il]; }

    const float* input_norm(uint32_t il) const override { return layer(il).attn_norm.f32(); }
    const float* ffn_norm_of(uint32_t il) const override { return layer(il).post_norm.f32(); }

    void queue_layer(uint32_t il, float* x, float* h, int64_t n, const int32_t* positions, int64_t kv_layer,
                     const float* next_norm, CpuContext& cpu) override {
        const GpuHybridLayer& L = layer(il);
        float* proj = L.recurrent ? delta_net(L.delta, il, h, n) : gated_attention(L.attn, h, n, positions, kv_layer);
        op("add_rms_norm post_attention_norm", [&] {
            gpu::gpu_add_rms_norm(x, proj, L.post_norm.f32(), n, config_.n_embd, config_.rms_eps, h, cur_->ctx(), hq_);
        });
        shared_expert(L.shared, L.shared_gate_inp, x, h, n);
        moe_ffn(L.experts, il, x, h, n, next_norm, cpu);
    }

    float* queue_attention_part(uint32_t il, float* h, int64_t n, const int32_t* positions, int64_t kv_layer) override {
        const GpuHybridLayer& L = layer(il);
        if (!L.recurrent) return gated_attention(L.attn, h, n, positions, kv_layer);
        return rank() == 0 ? delta_net(L.delta, il, h, n) : empty_part(n);
    }
    float* queue_ffn_part(uint32_t il, float* h, int64_t n, CpuContext&) override {
        const GpuHybridLayer& L = layer(il);
        float* part = moe_ffn_part(L.experts, il, h, n);
        if (rank() == 0) shared_expert(L.shared, L.shared_gate_inp, part, h, n);
        return part;
    }

    std::vector<std::vector<GpuHybridLayer>> layers_;  // [rank][layer]: one rank without a tensor split
    std::deque<std::vector<uint8_t>> column_copies_;   // column slices, kept until uploaded
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpu_hybrid(const GgufFile& file, const ModelConfig& config,
                                               const ComputeOptions& options) {
    return gpu::load_gpu_pass<GpuHybrid>(file, config, options);
}

}  // namespace strata
