// The Llama family's forward pass on the GPU (llama, mixtral, qwen3, qwen3moe, and gpt-oss, whose
// biases, sinks, sliding windows, YaRN table and biased clamped-SwiGLU experts are optional steps
// of the same recipe): the recipe of model/arch/llama_family.cpp and gpt_oss.cpp with the blocks
// of gpu_transformer.h, reading the same weight table (model/arch/llama_family.h) after
// uploading it to VRAM.
#include <memory>
#include <vector>

#include "backend/gpu/gpu_transformer.h"
#include "model/arch/llama_family.h"

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
        if (gpt_oss_) {
            for (size_t s = 0; s < config_.n_layer; ++s) {
                if (tiered(share_of(s))) {
                    return Status::error("gpt-oss on the GPU needs every expert in VRAM so far (its biased experts have "
                                         "no tiered path yet): give it a GPU or --vram-budget that holds the whole model, "
                                         "or run with --device cpu");
                }
            }
            rope_ = gpt_oss_rope_table(config_);
        }
        layers_.resize(w.layers.size());
        std::vector<Weight> input_norms;
        for (size_t il = 0; il < w.layers.size(); ++il) {
            STRATA_TRY(upload_layer(w.layers[il], share_of(il), layers_[il]));
            input_norms.push_back(w.layers[il].attn.norm);
        }
        return finish_load(file, w.token_embd, w.output_norm, w.output, input_norms);
    }

private:
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

    const float* input_norm(uint32_t il) const override { return layers_[il].attn_norm.f32(); }

    void queue_layer(uint32_t il, float* x, float* h, int64_t n, const int32_t* positions, int64_t kv_layer,
                     const float* next_norm, CpuContext& cpu) override {
        const GpuLayer& L = layers_[il];
        attention(L.attn, x, h, n, positions, kv_layer, L.ffn_norm.f32());
        if (L.moe) moe_ffn(L.experts, il, x, h, n, next_norm, cpu);
        else dense_ffn(L.ffn, x, h, n, next_norm);
    }

    std::vector<GpuLayer> layers_;
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpu_llama_family(const GgufFile& file, const ModelConfig& config,
                                                     const ComputeOptions& options) {
    auto model = std::make_unique<GpuLlamaFamily>(config, options);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
