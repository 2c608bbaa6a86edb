// The Llama family's forward pass on the GPU (llama, mixtral, qwen3, qwen3moe, and gpt-oss, whose
// biases, sinks, sliding windows, YaRN table and biased clamped-SwiGLU experts are optional steps
// of the same recipe): the recipe of model/arch/llama_family.cpp and gpt_oss.cpp with the blocks
// of gpu_transformer.h, reading the same weight table (model/arch/llama_family.h) after
// uploading it to VRAM. Under --split tensor each GPU uploads its part of every layer (rank_part).
#include <deque>
#include <memory>
#include <vector>

#include "model/gpu/gpu_transformer.h"
#include "model/arch/llama_family.h"
#include "model/weight_slices.h"

namespace strata {

namespace {

using gpu::DeviceWeight;

struct GpuLayer {
    DeviceWeight attn_norm;
    gpu::GpuAttentionWeights attn;
    bool moe = false;
    DeviceWeight ffn_norm;
    gpu::GpuDenseFfnWeights ffn;
    gpu::GpuMoeWeights experts;
};

class GpuLlamaFamily final : public gpu::GpuTransformer {
public:
    using GpuTransformer::GpuTransformer;

    Status load(const GgufFile& file) {
        STRATA_TRY(make_shares());
        LlamaWeights w;
        STRATA_TRY(load_llama_weights(file, config_, w));
        if (gpt_oss_) rope_ = gpt_oss_rope_table(config_);
        layers_.assign(ranks(), std::vector<GpuLayer>(w.layers.size()));
        std::vector<Weight> input_norms;
        for (size_t il = 0; il < w.layers.size(); ++il) {
            STRATA_TRY(upload_layer_parts(
                w.layers[il], il, layers_, [&](const LlamaLayer& src, size_t r) { return rank_part(src, r); },
                [&](const LlamaLayer& src, size_t s, GpuLayer& L) { return upload_layer(src, s, L); }));
            input_norms.push_back(w.layers[il].attn.norm);
        }
        STRATA_TRY(finish_load(file, w.token_embd, w.output_norm, w.output, input_norms));
        column_copies_.clear();  // uploaded: finish_load waited for the copies
        return Status::ok();
    }

    bool supports_tensor_split() const override { return true; }

private:
    // Rank r's part of a layer under --split tensor (model/weight_slices.h): its heads' rows of
    // wq/wk/wv (with their biases and sinks) and the same heads' columns of wo (whose bias is
    // added once, by rank 0); its share of a dense FFN's hidden units (rows of gate/up, columns of
    // down); its experts. Norms, the router and gpt-oss's expert biases (indexed by expert id)
    // stay whole.
    Result<LlamaLayer> rank_part(const LlamaLayer& src, size_t r) {
        const ModelConfig& c = config_;
        const auto rank = static_cast<int64_t>(r), n = static_cast<int64_t>(ranks());
        const int64_t hq = heads(), hk = heads_kv();
        LlamaLayer out = src;
        AttentionWeights& a = out.attn;
        STRATA_ASSIGN_OR_RETURN(a.wq, weight_rows(src.attn.wq, rank * hq * c.head_dim_k, hq * c.head_dim_k));
        STRATA_ASSIGN_OR_RETURN(a.wk, weight_rows(src.attn.wk, rank * hk * c.head_dim_k, hk * c.head_dim_k));
        STRATA_ASSIGN_OR_RETURN(a.wv, weight_rows(src.attn.wv, rank * hk * c.head_dim_v, hk * c.head_dim_v));
        if (src.attn.bq) {
            STRATA_ASSIGN_OR_RETURN(a.bq, weight_elements(src.attn.bq, rank * hq * c.head_dim_k, hq * c.head_dim_k));
        }
        if (src.attn.bk) {
            STRATA_ASSIGN_OR_RETURN(a.bk, weight_elements(src.attn.bk, rank * hk * c.head_dim_k, hk * c.head_dim_k));
        }
        if (src.attn.bv) {
            STRATA_ASSIGN_OR_RETURN(a.bv, weight_elements(src.attn.bv, rank * hk * c.head_dim_v, hk * c.head_dim_v));
        }
        STRATA_ASSIGN_OR_RETURN(a.wo, weight_columns(src.attn.wo, rank * hq * c.head_dim_v, hq * c.head_dim_v,
                                                     column_copies_.emplace_back()));
        if (r != 0) a.bo = Weight{};
        if (src.attn_sinks) {
            STRATA_ASSIGN_OR_RETURN(out.attn_sinks, weight_elements(src.attn_sinks, rank * hq, hq));
        }
        if (src.moe) {
            STRATA_TRY(keep_rank_experts(out.moe_ffn, r));
            return out;
        }
        const int64_t ff = src.ffn.gate.ne[1];
        if (ff % n != 0) {
            return Status::error("--split tensor over {} GPUs: the FFN's {} hidden units do not divide among them (use "
                                 "--split layer)",
                                 n, ff);
        }
        const int64_t each = ff / n;
        STRATA_ASSIGN_OR_RETURN(out.ffn.gate, weight_rows(src.ffn.gate, rank * each, each));
        STRATA_ASSIGN_OR_RETURN(out.ffn.up, weight_rows(src.ffn.up, rank * each, each));
        STRATA_ASSIGN_OR_RETURN(out.ffn.down, weight_columns(src.ffn.down, rank * each, each, column_copies_.emplace_back()));
        return out;
    }

    Status upload_layer(const LlamaLayer& src, size_t share_index, GpuLayer& L) {
        gpu::GpuShard& sh = share(share_index);
        const AttentionWeights& a = src.attn;
        STRATA_ASSIGN_OR_RETURN(L.attn_norm, sh.upload(a.norm, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.wq, sh.upload(a.wq, true));
        STRATA_ASSIGN_OR_RETURN(L.attn.wk, sh.upload(a.wk, true));
        STRATA_ASSIGN_OR_RETURN(L.attn.wv, sh.upload(a.wv, true));
        STRATA_ASSIGN_OR_RETURN(L.attn.wo, sh.upload(a.wo, true));
        STRATA_ASSIGN_OR_RETURN(L.attn.bq, sh.upload(a.bq, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.bk, sh.upload(a.bk, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.bv, sh.upload(a.bv, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.bo, sh.upload(a.bo, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.q_norm, sh.upload(a.q_norm, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.k_norm, sh.upload(a.k_norm, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.sinks, sh.upload(src.attn_sinks, false));
        L.attn.sliding = src.sliding;
        L.moe = src.moe;
        if (!src.moe) {
            STRATA_ASSIGN_OR_RETURN(L.ffn_norm, sh.upload(src.ffn.norm, false));
            STRATA_ASSIGN_OR_RETURN(L.ffn.gate, sh.upload(src.ffn.gate, true));
            STRATA_ASSIGN_OR_RETURN(L.ffn.up, sh.upload(src.ffn.up, true));
            STRATA_ASSIGN_OR_RETURN(L.ffn.down, sh.upload(src.ffn.down, true));
            return Status::ok();
        }
        STRATA_ASSIGN_OR_RETURN(L.ffn_norm, sh.upload(src.moe_ffn.norm, false));
        return upload_experts(src.moe_ffn, {src.router_bias, src.gate_bias, src.up_bias, src.down_bias}, share_index,
                              L.experts);
    }

    // Layer il as the share (or rank) being queued holds it.
    const GpuLayer& layer(uint32_t il) const { return layers_[rank()][il]; }

    const float* input_norm(uint32_t il) const override { return layer(il).attn_norm.f32(); }
    const float* ffn_norm_of(uint32_t il) const override { return layer(il).ffn_norm.f32(); }

    float* queue_attention_part(uint32_t il, float* h, int64_t n, const int32_t* positions, int64_t kv_layer) override {
        return attention_part(layer(il).attn, h, n, positions, kv_layer);
    }
    float* queue_ffn_part(uint32_t il, float* h, int64_t n, CpuContext&) override {
        const GpuLayer& L = layer(il);
        return L.moe ? moe_ffn_part(L.experts, il, h, n) : dense_ffn_part(L.ffn, h, n);
    }

    void queue_layer(uint32_t il, float* x, float* h, int64_t n, const int32_t* positions, int64_t kv_layer,
                     const float* next_norm, CpuContext& cpu) override {
        const GpuLayer& L = layer(il);
        attention(L.attn, x, h, n, positions, kv_layer, L.ffn_norm.f32());
        if (L.moe) moe_ffn(L.experts, il, x, h, n, next_norm, cpu);
        else dense_ffn(L.ffn, x, h, n, next_norm);
    }

    std::vector<std::vector<GpuLayer>> layers_;  // [rank][layer]: one rank without a tensor split
    std::deque<std::vector<uint8_t>> column_copies_;  // column slices, kept until uploaded
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpu_llama_family(const GgufFile& file, const ModelConfig& config,
                                                     const ComputeOptions& options) {
    return gpu::load_gpu_pass<GpuLlamaFamily>(file, config, options);
}

}  // namespace strata
