// The Llama family's forward pass on the GPU: the recipe of model/arch/llama_family.cpp with the
// ops of backend/gpu/gpu_ops.h, reading the same weight table (model/arch/llama_family.h) after
// uploading it to VRAM. Per step the host copies token ids and positions in and logits out; every
// op in between is queued on one stream without a host wait (MoE routing included).
// Decode speed at batch 1 is launch-bound (a thousand small kernels per token), so:
// - one-token steps with every expert in VRAM run as one graph launch (gpu_decode_graph.h); all
//   they need per step is read on the device from the positions array;
// - each residual add is fused with the norm that follows it (the next block's, or the output
//   norm after the last layer), q/k norms + rope + cache store are one launch, and a one-token
//   step routes and plans its experts in one launch.
// With profiling on (op_profiler.h) every op is bracketed and named, and steps run eagerly.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "backend/gpu/gpu_decode_graph.h"
#include "backend/gpu/gpu_model.h"
#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/gpu_routed_experts.h"
#include "backend/gpu/op_profiler.h"
#include "model/arch/llama_family.h"
#include "quant/traits.h"

namespace strata {

namespace {

using gpu::DeviceWeight;

// Device scratch slots of one forward pass (GpuContext::scratch); the MoE plan takes three.
enum Slot : int {
    kTokens, kPositions, kResidual, kNormed, kQ, kK, kV, kAttnOut, kProj, kGate, kUp, kRouter, kExpertIds,
    kExpertWeights, kExpertGate, kExpertUp, kExpertOut, kLogits, kQ8Normed, kQ8Attn, kQ8Gate, kMoePlan,
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
    uint64_t bytes() const override { return cache.bytes(); }
    gpu::GpuKvCache cache;
};

class GpuLlamaFamily final : public Model {
public:
    GpuLlamaFamily(const ModelConfig& config, const ComputeOptions& options)
        : options_(options), pool_(std::make_unique<gpu::DevicePool>(options.gpu_ordinal)),
          ctx_(std::make_unique<gpu::GpuContext>(options.gpu_ordinal, *pool_)) {
        config_ = config;
        pool_->set_budget(options.vram_budget);
        if (gpu::op_profiling_enabled()) {
            profiler_ = std::make_unique<gpu::OpProfiler>(ctx_->stream());
            ctx_->set_profiler(profiler_.get());
        }
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
        // The fused one-token routing's per-layer counters (gpu_moe_router_route_plan_single), zeroed.
        if (config_.n_expert > 0) {
            std::string error;
            route_counters_ = pool_->allocate(layers_.size() * sizeof(unsigned), &error);
            if (route_counters_) {
                const std::vector<unsigned> zeros(layers_.size(), 0u);
                ctx_->upload(route_counters_.data(), zeros.data(), zeros.size() * sizeof(unsigned));
            }
        }
        ctx_->synchronize();  // the copies read the mapped file, which must not change under them
        if (options_.routed_experts) {
            STRATA_ASSIGN_OR_RETURN(routed_, options_.routed_experts(file, *ctx_));
        } else if (!profiler_) {  // the tiers' host work and the profiler's events cannot be replayed
            decode_graph_ = std::make_unique<gpu::DecodeGraph>(*ctx_, config_.n_vocab);
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
        const int64_t n = batch.n_tokens;
        STRATA_CHECK(batch.pos0 + n <= cache.n_ctx(), "batch runs past the KV cache");
        gpu::GpuContext& g = *ctx_;
        g.activate();
        if (n == 1 && decode_graph_ && decode_graph_->enabled()) {
            const auto step = [&](const int32_t* io) { return queue_forward(io, io + 1, 1, LogitsFor::Last, cache, cpu); };
            if (decode_graph_->run(batch.tokens[0], batch.positions[0], cache_addresses(cache), step, logits)) return;
        }
        auto* tokens = static_cast<int32_t*>(g.scratch(kTokens, static_cast<uint64_t>(n) * sizeof(int32_t)));
        auto* positions = static_cast<int32_t*>(g.scratch(kPositions, static_cast<uint64_t>(n) * sizeof(int32_t)));
        g.upload(tokens, batch.tokens, static_cast<uint64_t>(n) * sizeof(int32_t));
        g.upload(positions, batch.positions, static_cast<uint64_t>(n) * sizeof(int32_t));
        const float* out = queue_forward(tokens, positions, n, which, cache, cpu);
        const int64_t rows = which == LogitsFor::Last ? 1 : n;
        g.download(logits, out, static_cast<uint64_t>(rows) * config_.n_vocab * sizeof(float));
        g.synchronize();
        if (profiler_) profiler_->flush();
    }

private:
    // Runs f as the op `name`: bracketed by the profiler's events when profiling, else just f.
    template <typename F> void op(const char* name, F&& f) {
        gpu::OpScope scope(*ctx_, name);
        f();
    }

    // Every device address of the cache a step reads or writes (a captured step holds them).
    std::vector<const void*> cache_addresses(const gpu::GpuKvCache& cache) const {
        std::vector<const void*> a;
        for (size_t il = 0; il < layers_.size(); ++il) {
            a.push_back(cache.keys(static_cast<int64_t>(il)));
            a.push_back(cache.values(static_cast<int64_t>(il)));
        }
        return a;
    }

    // Queues the whole pass for n tokens (ids and positions on the device); returns the device
    // logits: the last row's (LogitsFor::Last) or every row's. Nothing here reads a host value
    // that changes from one decode step to the next.
    const float* queue_forward(const int32_t* tokens, const int32_t* positions, int64_t n, LogitsFor which,
                               gpu::GpuKvCache& cache, CpuContext& cpu) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = *ctx_;
        const int64_t e = c.n_embd;
        float* x = g.scratch_floats(kResidual, static_cast<uint64_t>(n * e));
        float* h = g.scratch_floats(kNormed, static_cast<uint64_t>(n * e));
        op("get_rows token_embd", [&] { gpu::gpu_get_rows(token_embd_, tokens, n, x, g); });
        // Small steps take the int8 matrix-vector kernel: every norm that writes h also writes it
        // quantized, once for all the products that read it.
        hq_ = nullptr;
        if (takes_int8(n, e)) {
            hq_view_ = gpu::gpu_q8_view(g.scratch(kQ8Normed, gpu::gpu_q8_bytes(n, e)), n, e);
            hq_ = &hq_view_;
        }
        // Each sub-layer leaves h = the next norm of x: the first layer's input norm is the only
        // one computed alone.
        const float* first_norm = layers_.empty() ? output_norm_.f32() : layers_[0].attn.norm.f32();
        op("rms_norm attn_norm", [&] { gpu::gpu_rms_norm(x, first_norm, n, e, c.rms_eps, h, g, hq_); });
        for (size_t il = 0; il < layers_.size(); ++il) {
            const GpuLayer& L = layers_[il];
            const float* next_norm = il + 1 < layers_.size() ? layers_[il + 1].attn.norm.f32() : output_norm_.f32();
            attention(L.attn, x, h, n, positions, cache, static_cast<int64_t>(il), L.ffn_norm.f32());
            if (L.moe) moe_ffn(L, static_cast<int64_t>(il), x, h, n, next_norm, cpu);
            else dense_ffn(L, x, h, n, next_norm);
        }
        if (routed_) routed_->end_forward(g);
        const int64_t first = which == LogitsFor::Last ? n - 1 : 0;
        const int64_t rows = n - first;
        float* out = g.scratch_floats(kLogits, static_cast<uint64_t>(rows) * c.n_vocab);
        gpu::GpuQ8Rows last;
        if (hq_) last = gpu::gpu_q8_rows_from(*hq_, first);
        op("matmul output", [&] { gpu::gpu_matmul(output_, 0, h + first * e, rows, out, g, hq_ ? &last : nullptr); });
        return out;
    }

private:
    // x += attn(h), h = norm(x) on entry, as attention_block (model/blocks/attention_block.cpp);
    // leaves h = ffn_norm(x) of the updated x.
    void attention(const GpuAttentionWeights& w, float* x, float* h, int64_t n, const int32_t* positions,
                   gpu::GpuKvCache& cache, int64_t layer, const float* ffn_norm) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = *ctx_;
        const int64_t e = c.n_embd, q_dim = c.q_dim(), k_dim = c.kv_dim_k(), v_dim = c.kv_dim_v();
        float* q = g.scratch_floats(kQ, static_cast<uint64_t>(n * q_dim));
        float* k = g.scratch_floats(kK, static_cast<uint64_t>(n * k_dim));
        float* v = g.scratch_floats(kV, static_cast<uint64_t>(n * v_dim));
        const gpu::GpuMatvecOut qkv[] = {{&w.wq, q}, {&w.wk, k}, {&w.wv, v}};
        bool fused = false;
        if (hq_) op("matmul attn_qkv", [&] { fused = gpu::gpu_matvec_q8_many(qkv, 3, *hq_, n, g); });
        if (!fused) {
            op("matmul attn_q", [&] { gpu::gpu_matmul(w.wq, 0, h, n, q, g, hq_); });
            op("matmul attn_k", [&] { gpu::gpu_matmul(w.wk, 0, h, n, k, g, hq_); });
            op("matmul attn_v", [&] { gpu::gpu_matmul(w.wv, 0, h, n, v, g, hq_); });
        }
        if (w.bq) op("add_bias", [&] { gpu::gpu_add_bias(q, w.bq.f32(), n, q_dim, g); });
        if (w.bk) op("add_bias", [&] { gpu::gpu_add_bias(k, w.bk.f32(), n, k_dim, g); });
        if (w.bv) op("add_bias", [&] { gpu::gpu_add_bias(v, w.bv.f32(), n, v_dim, g); });
        const gpu::GpuRope rope{c.rope_style == RopeStyle::Neox, c.head_dim_k, c.rope_dims, c.rope_base};
        op("qk_norm_rope_store", [&] {
            gpu::gpu_qk_norm_rope_store(q, k, v, n, c.n_head, w.q_norm ? w.q_norm.f32() : nullptr,
                                        w.k_norm ? w.k_norm.f32() : nullptr, c.rms_eps, rope, positions, cache, layer, g);
        });

        float* attn = g.scratch_floats(kAttnOut, static_cast<uint64_t>(n * c.n_head * c.head_dim_v));
        gpu::GpuAttentionParams ap;
        ap.n_head = c.n_head, ap.n_head_kv = c.n_head_kv, ap.head_dim_k = c.head_dim_k, ap.head_dim_v = c.head_dim_v;
        ap.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim_k));
        // Small steps: the attention kernels may write attn quantized for the output projection too.
        const int64_t attn_width = c.n_head * c.head_dim_v;
        gpu::GpuQ8Rows aq;
        bool attn_quantized = false;
        if (hq_ && attn_width % 32 == 0) aq = gpu::gpu_q8_view(g.scratch(kQ8Attn, gpu::gpu_q8_bytes(n, attn_width)), n, attn_width);
        op("attention", [&] {
            attn_quantized = gpu::gpu_attention_at(q, cache, layer, n, positions, ap, attn, g, aq.q ? &aq : nullptr);
        });
        float* proj = g.scratch_floats(kProj, static_cast<uint64_t>(n * e));
        const gpu::GpuQ8Rows* aq_used = attn_quantized ? &aq : quantized(attn, n, attn_width, n, kQ8Attn, aq);
        op("matmul attn_output", [&] { gpu::gpu_matmul(w.wo, 0, attn, n, proj, g, aq_used); });
        if (w.bo) op("add_bias", [&] { gpu::gpu_add_bias(proj, w.bo.f32(), n, e, g); });
        op("add_rms_norm ffn_norm", [&] { gpu::gpu_add_rms_norm(x, proj, ffn_norm, n, e, c.rms_eps, h, g, hq_); });
    }

    // x += down(silu(gate(h)) · up(h)), h = ffn_norm(x) on entry, as dense_ffn_block; leaves
    // h = next_norm(x).
    void dense_ffn(const GpuLayer& L, float* x, float* h, int64_t n, const float* next_norm) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = *ctx_;
        const int64_t e = c.n_embd, ff = L.gate.ne[1];
        float* gate = g.scratch_floats(kGate, static_cast<uint64_t>(n * ff));
        float* up = g.scratch_floats(kUp, static_cast<uint64_t>(n * ff));
        bool fused = false;
        if (hq_) op("matmul ffn_gate_up_swiglu", [&] { fused = gpu::gpu_matvec_q8_swiglu(L.gate, L.up, *hq_, n, gate, g); });
        if (!fused) {
            op("matmul ffn_gate", [&] { gpu::gpu_matmul(L.gate, 0, h, n, gate, g, hq_); });
            op("matmul ffn_up", [&] { gpu::gpu_matmul(L.up, 0, h, n, up, g, hq_); });
            op("swiglu", [&] { gpu::gpu_swiglu(gate, up, n * ff, g); });
        }
        float* out = g.scratch_floats(kProj, static_cast<uint64_t>(n * e));
        gpu::GpuQ8Rows gq;
        const gpu::GpuQ8Rows* gq_used = quantized(gate, n, ff, n, kQ8Gate, gq);
        op("matmul ffn_down", [&] { gpu::gpu_matmul(L.down, 0, gate, n, out, g, gq_used); });
        op("add_rms_norm next", [&] { gpu::gpu_add_rms_norm(x, out, next_norm, n, e, c.rms_eps, h, g, hq_); });
    }

    // Softmax top-k routing, then each (token, expert) pair through its expert, as moe_ffn_block;
    // pairs are grouped by expert on the device so each expert's rows are read once per tile.
    // h = ffn_norm(x) on entry; leaves h = next_norm(x).
    void moe_ffn(const GpuLayer& L, int64_t layer, float* x, float* h, int64_t n, const float* next_norm, CpuContext& cpu) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = *ctx_;
        const int64_t e = c.n_embd, n_exp = c.n_expert, k = c.n_expert_used;
        const int64_t pairs = n * k;
        float* router = g.scratch_floats(kRouter, static_cast<uint64_t>(n * n_exp));
        auto* ids = static_cast<int32_t*>(g.scratch(kExpertIds, static_cast<uint64_t>(pairs) * sizeof(int32_t)));
        float* weights = g.scratch_floats(kExpertWeights, static_cast<uint64_t>(pairs));
        // One token with every expert in VRAM: router, routing and plan in one launch.
        const bool fused_routing = n == 1 && !routed_ && static_cast<bool>(route_counters_);
        if (!fused_routing) op("matmul ffn_gate_inp", [&] { gpu::gpu_matmul(L.router, 0, h, n, router, g, hq_); });
        if (routed_) {  // experts not all in VRAM: the tiers compute them (GPU hits, CPU, streamed)
            op("moe_route", [&] { gpu::gpu_moe_route_softmax_topk(router, n, n_exp, k, c.norm_topk_prob, ids, weights, g); });
            op("routed_experts", [&] {
                routed_->forward(gpu::RoutedExpertsStep{layer, n, e, k, h, hq_, ids, weights, x, next_norm, c.rms_eps, h, hq_}, g,
                                 cpu);
            });
            return;
        }
        gpu::MoePlan plan;
        if (fused_routing) {
            op("moe_router_route_plan_single", [&] {
                plan = gpu::gpu_moe_router_route_plan_single(L.router, h, router, k, c.norm_topk_prob, ids, weights, kMoePlan,
                                                             route_counters_.as<unsigned>() + layer, g);
            });
        } else if (n == 1) {  // one token: k distinct experts, a plan of fixed shape, written by the routing
            op("moe_route_plan_single", [&] {
                plan = gpu::gpu_moe_route_plan_single(router, n_exp, k, c.norm_topk_prob, ids, weights, kMoePlan, g);
            });
        } else {
            op("moe_route", [&] { gpu::gpu_moe_route_softmax_topk(router, n, n_exp, k, c.norm_topk_prob, ids, weights, g); });
            op("moe_plan", [&] {
                plan = gpu::gpu_moe_plan(ids, pairs, n_exp, kMoePlan, g,
                                         gpu::gpu_moe_tile_columns(pairs, n_exp, L.gate_exps, L.down_exps));
            });
        }
        const int64_t ff = L.gate_exps.ne[1];
        float* gate = g.scratch_floats(kExpertGate, static_cast<uint64_t>(pairs * ff));
        float* up = g.scratch_floats(kExpertUp, static_cast<uint64_t>(pairs * ff));
        // Narrow tiles take the int8 kernel (gate, up and swiglu in one launch when the weights
        // allow); wide ones the tiled float kernel.
        const bool narrow = plan.tile_columns == gpu::kGpuMatmulColumns;
        const gpu::GpuQ8Rows* hx = narrow ? hq_ : nullptr;
        bool fused = false;
        if (hx) {
            op("matmul_experts gate_up_swiglu", [&] {
                fused = gpu::gpu_matvec_q8_swiglu_experts(L.gate_exps, L.up_exps, plan, *hx, gpu::MoeRows::Pair, k, gate,
                                                          gpu::MoeRows::Pair, g);
            });
        }
        if (!fused) {
            op("matmul_experts gate", [&] { gpu::gpu_matmul_experts(L.gate_exps, plan, h, k, gate, g, hx); });
            op("matmul_experts up", [&] { gpu::gpu_matmul_experts(L.up_exps, plan, h, k, up, g, hx); });
            op("swiglu", [&] { gpu::gpu_swiglu(gate, up, pairs * ff, g); });
        }
        float* out = g.scratch_floats(kExpertOut, static_cast<uint64_t>(pairs * e));
        gpu::GpuQ8Rows gq;
        const gpu::GpuQ8Rows* gq_used = narrow ? quantized(gate, pairs, ff, n, kQ8Gate, gq) : nullptr;
        op("matmul_experts down", [&] { gpu::gpu_matmul_experts(L.down_exps, plan, gate, 1, out, g, gq_used); });
        op("moe_combine_rms_norm next", [&] {
            gpu::gpu_moe_combine_rms_norm(out, weights, n, k, e, x, next_norm, c.rms_eps, h, g, hq_);
        });
    }

    // x (rows × width) quantized for the int8 matrix-vector kernel, when a step of n tokens takes
    // it (fewer than the tiled kernel's minimum); null otherwise, and the products read x.
    const gpu::GpuQ8Rows* quantized(const float* x, int64_t rows, int64_t width, int64_t n, Slot slot, gpu::GpuQ8Rows& out) {
        if (!takes_int8(n, width)) return nullptr;
        op("quantize_q8", [&] { out = gpu::gpu_quantize_q8(x, rows, width, slot, *ctx_); });
        return &out;
    }

    bool takes_int8(int64_t n, int64_t width) const {
        return int8_matvec_ && n < gpu::kGpuTiledMinTokens && width % 32 == 0;
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
    // Off with STRATA_GPU_MATVEC=f32 (for A/B benchmarks of the two matrix-vector kernels).
    const bool int8_matvec_ = [] {
        const char* v = std::getenv("STRATA_GPU_MATVEC");
        return !(v && std::string(v) == "f32");
    }();
    // This forward's h as int8 (written by the norms), or null when the step is too large.
    gpu::GpuQ8Rows hq_view_;
    const gpu::GpuQ8Rows* hq_ = nullptr;
    // Declaration order is destruction order reversed: buffers go back to the pool before it dies.
    std::unique_ptr<gpu::DevicePool> pool_;
    std::unique_ptr<gpu::GpuContext> ctx_;
    std::unique_ptr<gpu::OpProfiler> profiler_;       // set when profiling (op_profiler.h)
    std::unique_ptr<gpu::DecodeGraph> decode_graph_;  // one-token steps as graphs; null with tiers or profiling
    std::vector<gpu::DeviceBuffer> buffers_;
    gpu::DeviceBuffer route_counters_;  // one per layer; empty when the model has no experts
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
