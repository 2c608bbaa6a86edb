// The Llama family's forward pass on the GPU: the recipe of model/arch/llama_family.cpp with the
// ops of backend/gpu/gpu_ops.h, reading the same weight table (model/arch/llama_family.h) after
// uploading it to VRAM. Per step the host copies token ids and positions in and logits out; every
// op in between is queued on one stream without a host wait (MoE routing included).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "backend/gpu/gpu_model.h"
#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/gpu_routed_experts.h"
#include "model/arch/llama_family.h"
#include "quant/traits.h"

namespace strata {

namespace {

using gpu::DeviceWeight;

// Device scratch slots of one forward pass (GpuContext::scratch); the MoE plan takes three.
enum Slot : int {
    kTokens, kPositions, kResidual, kNormed, kQ, kK, kV, kAttnOut, kProj, kGate, kUp, kRouter, kExpertIds,
    kExpertWeights, kExpertGate, kExpertUp, kExpertOut, kLogits, kMoePlan,
};

struct GpuAttentionWeights {
    DeviceWeight norm, wq, wk, wv, bq, bk, bv, q_norm, k_norm, wo, bo;
};
struct GpuLayer {
    GpuAttentionWeights attn;
    bool moe = false;
    DeviceWeight ffn_norm;
    DeviceWeight gate, up, down;                   // dense FFN
    DeviceWeight router, gate_exps, up_exps, down_exps;  // MoE FFN
};

class GpuKvStorage final : public KvCacheStorage {
public:
    template <typename... Args> explicit GpuKvStorage(Args&&... args) : cache(std::forward<Args>(args)...) {}
    gpu::GpuKvCache cache;
};

class GpuLlamaFamily final : public Model {
public:
    GpuLlamaFamily(const ModelConfig& config, const ComputeOptions& options)
        : options_(options), pool_(std::make_unique<gpu::DevicePool>(options.gpu_ordinal)),
          ctx_(std::make_unique<gpu::GpuContext>(options.gpu_ordinal, *pool_)) {
        config_ = config;
        pool_->set_budget(options.vram_budget);
    }

    Status load(const GgufFile& file) {
        LlamaWeights w;
        STRATA_TRY(load_llama_weights(file, config_, w));
        STRATA_ASSIGN_OR_RETURN(token_embd_, upload(w.token_embd, true));
        STRATA_ASSIGN_OR_RETURN(output_norm_, upload(w.output_norm, false));
        STRATA_ASSIGN_OR_RETURN(output_, upload(w.output, true));
        layers_.resize(w.layers.size());
        for (size_t il = 0; il < w.layers.size(); ++il) {
            const LlamaLayer& src = w.layers[il];
            GpuLayer& L = layers_[il];
            const AttentionWeights& a = src.attn;
            STRATA_ASSIGN_OR_RETURN(L.attn.norm, upload(a.norm, false));
            STRATA_ASSIGN_OR_RETURN(L.attn.wq, upload(a.wq, true));
            STRATA_ASSIGN_OR_RETURN(L.attn.wk, upload(a.wk, true));
            STRATA_ASSIGN_OR_RETURN(L.attn.wv, upload(a.wv, true));
            STRATA_ASSIGN_OR_RETURN(L.attn.wo, upload(a.wo, true));
            STRATA_ASSIGN_OR_RETURN(L.attn.bq, upload(a.bq, false));
            STRATA_ASSIGN_OR_RETURN(L.attn.bk, upload(a.bk, false));
            STRATA_ASSIGN_OR_RETURN(L.attn.bv, upload(a.bv, false));
            STRATA_ASSIGN_OR_RETURN(L.attn.bo, upload(a.bo, false));
            STRATA_ASSIGN_OR_RETURN(L.attn.q_norm, upload(a.q_norm, false));
            STRATA_ASSIGN_OR_RETURN(L.attn.k_norm, upload(a.k_norm, false));
            L.moe = src.moe;
            if (src.moe) {
                STRATA_ASSIGN_OR_RETURN(L.ffn_norm, upload(src.moe_ffn.norm, false));
                STRATA_ASSIGN_OR_RETURN(L.router, upload(src.moe_ffn.router, true));
                if (!options_.routed_experts) {  // else the tiers hold them (below)
                    STRATA_ASSIGN_OR_RETURN(L.gate_exps, upload(src.moe_ffn.gate_exps, true));
                    STRATA_ASSIGN_OR_RETURN(L.up_exps, upload(src.moe_ffn.up_exps, true));
                    STRATA_ASSIGN_OR_RETURN(L.down_exps, upload(src.moe_ffn.down_exps, true));
                }
            } else {
                STRATA_ASSIGN_OR_RETURN(L.ffn_norm, upload(src.ffn.norm, false));
                STRATA_ASSIGN_OR_RETURN(L.gate, upload(src.ffn.gate, true));
                STRATA_ASSIGN_OR_RETURN(L.up, upload(src.ffn.up, true));
                STRATA_ASSIGN_OR_RETURN(L.down, upload(src.ffn.down, true));
            }
        }
        ctx_->synchronize();  // the copies read the mapped file, which must not change under them
        if (options_.routed_experts) {
            STRATA_ASSIGN_OR_RETURN(routed_, options_.routed_experts(file, *ctx_));
        }
        return Status::ok();
    }

    std::string device_name() const override {
        const gpu::DeviceInfo& d = ctx_->device();
        return fmt::format("{} {} ({}), {:.2f} GiB of weights in VRAM", gpu::runtime_name(), d.name, d.arch,
                           static_cast<double>(weight_bytes_) / (1 << 30));
    }

    KvCache make_kv_cache(int64_t n_ctx) const override {
        const ModelConfig& c = config_;
        std::string error;
        auto storage = std::make_unique<GpuKvStorage>(*pool_, c.n_layer, n_ctx, c.kv_dim_k(), c.kv_dim_v(),
                                                      options_.kv_f16 ? gpu::KvType::F16 : gpu::KvType::F32, &error);
        if (!storage->cache.ok()) {
            // Placement planning (plan/) will refuse such a context before loading; until then, say why.
            std::fprintf(stderr, "strata: the GPU KV cache for %lld positions does not fit: %s (use a smaller --ctx-size)\n",
                         static_cast<long long>(n_ctx), error.c_str());
            std::abort();
        }
        return KvCache(n_ctx, c.kv_dim_k(), c.kv_dim_v(), std::move(storage));
    }

    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& cpu) override {
        auto* storage = dynamic_cast<GpuKvStorage*>(kv.storage());
        STRATA_CHECK(storage != nullptr, "GPU forward with a KV cache this model did not make (use make_kv_cache)");
        gpu::GpuKvCache& cache = storage->cache;
        const ModelConfig& c = config_;
        const int64_t n = batch.n_tokens, e = c.n_embd;
        STRATA_CHECK(batch.pos0 + n <= cache.n_ctx(), "batch runs past the KV cache");
        gpu::GpuContext& g = *ctx_;
        g.activate();
        auto* tokens = static_cast<int32_t*>(g.scratch(kTokens, static_cast<uint64_t>(n) * sizeof(int32_t)));
        auto* positions = static_cast<int32_t*>(g.scratch(kPositions, static_cast<uint64_t>(n) * sizeof(int32_t)));
        g.upload(tokens, batch.tokens, static_cast<uint64_t>(n) * sizeof(int32_t));
        g.upload(positions, batch.positions, static_cast<uint64_t>(n) * sizeof(int32_t));

        float* x = g.scratch_floats(kResidual, static_cast<uint64_t>(n * e));
        gpu::gpu_get_rows(token_embd_, tokens, n, x, g);
        for (size_t il = 0; il < layers_.size(); ++il) {
            const GpuLayer& L = layers_[il];
            attention(L.attn, x, n, positions, batch.pos0, cache, static_cast<int64_t>(il));
            if (L.moe) moe_ffn(L, static_cast<int64_t>(il), x, n, cpu);
            else dense_ffn(L, x, n);
        }
        if (routed_) routed_->end_forward(g);
        const int64_t first = which == LogitsFor::Last ? n - 1 : 0;
        const int64_t rows = n - first;
        float* normed = g.scratch_floats(kNormed, static_cast<uint64_t>(rows * e));
        gpu::gpu_rms_norm(x + first * e, output_norm_.f32(), rows, e, c.rms_eps, normed, g);
        float* out = g.scratch_floats(kLogits, static_cast<uint64_t>(rows) * c.n_vocab);
        gpu::gpu_matmul(output_, 0, normed, rows, out, g);
        g.download(logits, out, static_cast<uint64_t>(rows) * c.n_vocab * sizeof(float));
        g.synchronize();
    }

private:
    // x += attn(norm(x)), as attention_block (model/blocks/attention_block.cpp).
    void attention(const GpuAttentionWeights& w, float* x, int64_t n, const int32_t* positions, int64_t pos0,
                   gpu::GpuKvCache& cache, int64_t layer) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = *ctx_;
        const int64_t e = c.n_embd, q_dim = c.q_dim(), k_dim = c.kv_dim_k(), v_dim = c.kv_dim_v();
        float* h = g.scratch_floats(kNormed, static_cast<uint64_t>(n * e));
        gpu::gpu_rms_norm(x, w.norm.f32(), n, e, c.rms_eps, h, g);
        float* q = g.scratch_floats(kQ, static_cast<uint64_t>(n * q_dim));
        float* k = g.scratch_floats(kK, static_cast<uint64_t>(n * k_dim));
        float* v = g.scratch_floats(kV, static_cast<uint64_t>(n * v_dim));
        gpu::gpu_matmul(w.wq, 0, h, n, q, g);
        gpu::gpu_matmul(w.wk, 0, h, n, k, g);
        gpu::gpu_matmul(w.wv, 0, h, n, v, g);
        if (w.bq) gpu::gpu_add_bias(q, w.bq.f32(), n, q_dim, g);
        if (w.bk) gpu::gpu_add_bias(k, w.bk.f32(), n, k_dim, g);
        if (w.bv) gpu::gpu_add_bias(v, w.bv.f32(), n, v_dim, g);
        if (w.q_norm) gpu::gpu_rms_norm(q, w.q_norm.f32(), n * c.n_head, c.head_dim_k, c.rms_eps, q, g);
        if (w.k_norm) gpu::gpu_rms_norm(k, w.k_norm.f32(), n * c.n_head_kv, c.head_dim_k, c.rms_eps, k, g);
        const gpu::GpuRope rope{c.rope_style == RopeStyle::Neox, c.head_dim_k, c.rope_dims, c.rope_base};
        gpu::gpu_rope(q, n, c.n_head, rope, positions, g);
        gpu::gpu_rope(k, n, c.n_head_kv, rope, positions, g);
        gpu::gpu_kv_store(k, v, n, pos0, cache, layer, g);

        float* attn = g.scratch_floats(kAttnOut, static_cast<uint64_t>(n * c.n_head * c.head_dim_v));
        gpu::GpuAttentionParams ap;
        ap.n_head = c.n_head, ap.n_head_kv = c.n_head_kv, ap.head_dim_k = c.head_dim_k, ap.head_dim_v = c.head_dim_v;
        ap.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim_k));
        gpu::gpu_attention(q, cache, layer, n, pos0, ap, attn, g);
        float* proj = g.scratch_floats(kProj, static_cast<uint64_t>(n * e));
        gpu::gpu_matmul(w.wo, 0, attn, n, proj, g);
        if (w.bo) gpu::gpu_add_bias(proj, w.bo.f32(), n, e, g);
        gpu::gpu_add(x, proj, n * e, g);
    }

    // x += down(silu(gate(h)) · up(h)), h = norm(x), as dense_ffn_block.
    void dense_ffn(const GpuLayer& L, float* x, int64_t n) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = *ctx_;
        const int64_t e = c.n_embd, ff = L.gate.ne[1];
        float* h = g.scratch_floats(kNormed, static_cast<uint64_t>(n * e));
        gpu::gpu_rms_norm(x, L.ffn_norm.f32(), n, e, c.rms_eps, h, g);
        float* gate = g.scratch_floats(kGate, static_cast<uint64_t>(n * ff));
        float* up = g.scratch_floats(kUp, static_cast<uint64_t>(n * ff));
        gpu::gpu_matmul(L.gate, 0, h, n, gate, g);
        gpu::gpu_matmul(L.up, 0, h, n, up, g);
        gpu::gpu_swiglu(gate, up, n * ff, g);
        float* out = g.scratch_floats(kProj, static_cast<uint64_t>(n * e));
        gpu::gpu_matmul(L.down, 0, gate, n, out, g);
        gpu::gpu_add(x, out, n * e, g);
    }

    // Softmax top-k routing, then each (token, expert) pair through its expert, as moe_ffn_block;
    // pairs are grouped by expert on the device so each expert's rows are read once per tile.
    void moe_ffn(const GpuLayer& L, int64_t layer, float* x, int64_t n, CpuContext& cpu) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = *ctx_;
        const int64_t e = c.n_embd, n_exp = c.n_expert, k = c.n_expert_used, ff = L.gate_exps.ne[1];
        const int64_t pairs = n * k;
        float* h = g.scratch_floats(kNormed, static_cast<uint64_t>(n * e));
        gpu::gpu_rms_norm(x, L.ffn_norm.f32(), n, e, c.rms_eps, h, g);
        float* router = g.scratch_floats(kRouter, static_cast<uint64_t>(n * n_exp));
        gpu::gpu_matmul(L.router, 0, h, n, router, g);
        auto* ids = static_cast<int32_t*>(g.scratch(kExpertIds, static_cast<uint64_t>(pairs) * sizeof(int32_t)));
        float* weights = g.scratch_floats(kExpertWeights, static_cast<uint64_t>(pairs));
        gpu::gpu_moe_route_softmax_topk(router, n, n_exp, k, c.norm_topk_prob, ids, weights, g);
        if (routed_) {  // experts not all in VRAM: the tiers compute them (GPU hits, CPU, streamed)
            routed_->forward(gpu::RoutedExpertsStep{layer, n, e, k, h, ids, weights, x}, g, cpu);
            return;
        }
        const gpu::MoePlan plan = gpu::gpu_moe_plan(ids, pairs, n_exp, kMoePlan, g);
        float* gate = g.scratch_floats(kExpertGate, static_cast<uint64_t>(pairs * ff));
        float* up = g.scratch_floats(kExpertUp, static_cast<uint64_t>(pairs * ff));
        gpu::gpu_matmul_experts(L.gate_exps, plan, h, k, gate, g);
        gpu::gpu_matmul_experts(L.up_exps, plan, h, k, up, g);
        gpu::gpu_swiglu(gate, up, pairs * ff, g);
        float* out = g.scratch_floats(kExpertOut, static_cast<uint64_t>(pairs * e));
        gpu::gpu_matmul_experts(L.down_exps, plan, gate, 1, out, g);
        gpu::gpu_moe_combine(out, weights, n, k, e, x, g);
    }

    // Copies one weight to VRAM (once, however many roles share it: tied embeddings).
    Result<DeviceWeight> upload(const Weight& w, bool matrix) {
        if (!w) return DeviceWeight{};
        if (auto it = uploaded_.find(w.data); it != uploaded_.end()) return it->second;
        const std::string name = w.info ? w.info->name : std::string("(unnamed)");
        if (matrix && (!gpu::gpu_supports_type(w.type) || w.ne[0] % 32 != 0)) {
            return Status::error("tensor {}: type {} with rows of {} has no GPU kernel yet (run with --device cpu)",
                                 name, tensor_type_name(w.type), w.ne[0]);
        }
        const uint64_t bytes = w.row_bytes * static_cast<uint64_t>(w.rows());
        std::string error;
        gpu::DeviceBuffer buffer = pool_->allocate(bytes, &error);
        if (!buffer) return Status::error("uploading tensor {} ({} bytes) to the GPU: {}", name, bytes, error);
        ctx_->upload(buffer.data(), w.data, bytes);
        DeviceWeight d;
        d.data = buffer.as<uint8_t>();
        d.type = w.type;
        for (int i = 0; i < 4; ++i) d.ne[i] = w.ne[i];
        d.row_bytes = w.row_bytes;
        weight_bytes_ += bytes;
        buffers_.push_back(std::move(buffer));
        uploaded_.emplace(w.data, d);
        return d;
    }

    ComputeOptions options_;
    // Declaration order is destruction order reversed: buffers go back to the pool before it dies.
    std::unique_ptr<gpu::DevicePool> pool_;
    std::unique_ptr<gpu::GpuContext> ctx_;
    std::vector<gpu::DeviceBuffer> buffers_;
    std::unordered_map<const uint8_t*, DeviceWeight> uploaded_;
    uint64_t weight_bytes_ = 0;
    DeviceWeight token_embd_, output_norm_, output_;
    std::vector<GpuLayer> layers_;
    std::unique_ptr<gpu::RoutedExperts> routed_;  // declared last: freed first, while its pool lives
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpu_llama_family(const GgufFile& file, const ModelConfig& config,
                                                     const ComputeOptions& options) {
    auto model = std::make_unique<GpuLlamaFamily>(config, options);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
