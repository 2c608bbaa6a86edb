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
// Under --split layer the layers are shared out over several GPUs (gpu_shard.h), in order: each
// share runs its layers on its own stream, and at a boundary the next share's stream waits for
// the previous one's event and copies the residual x and the normed h (and h as int8) over, peer
// to peer when the pair allows. The share before a boundary holds a copy of the next layer's
// input norm, so h is computed as on one GPU and the split gives the same bits.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/gpu/gpu_decode_graph.h"
#include "backend/gpu/gpu_model.h"
#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/gpu_routed_experts.h"
#include "backend/gpu/gpu_shard.h"
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

// The KV cache of a GPU model: one part per share, holding its layers (local indices).
class GpuKvStorage final : public KvCacheStorage {
public:
    uint64_t bytes() const override {
        uint64_t total = 0;
        for (const auto& c : caches) total += c->bytes();
        return total;
    }
    std::vector<std::unique_ptr<gpu::GpuKvCache>> caches;
};

class GpuLlamaFamily final : public Model {
public:
    GpuLlamaFamily(const ModelConfig& config, const ComputeOptions& options) : options_(options) { config_ = config; }

    Status load(const GgufFile& file) {
        STRATA_TRY(make_shares());
        LlamaWeights w;
        STRATA_TRY(load_llama_weights(file, config_, w));
        gpu::GpuShard& first = *shares_.front();
        gpu::GpuShard& last = *shares_.back();
        STRATA_ASSIGN_OR_RETURN(token_embd_, first.upload(w.token_embd, true));
        STRATA_ASSIGN_OR_RETURN(output_norm_, last.upload(w.output_norm, false));
        STRATA_ASSIGN_OR_RETURN(output_, last.upload(w.output, true));
        layers_.resize(w.layers.size());
        for (size_t il = 0; il < w.layers.size(); ++il) {
            STRATA_TRY(upload_layer(w.layers[il], share_of(il), layers_[il]));
        }
        // Each share but the last computes the input norm of the next share's first layer.
        boundary_norms_.resize(shares_.size());
        for (size_t s = 0; s + 1 < shares_.size(); ++s) {
            const uint32_t next = shares_[s]->layer_end();
            STRATA_ASSIGN_OR_RETURN(boundary_norms_[s], shares_[s]->upload(w.layers[next].attn.norm, false));
        }
        if (config_.n_expert > 0) {
            for (auto& share : shares_) STRATA_TRY(share->make_route_counters(config_.n_layer));
        }
        for (auto& share : shares_) share->ctx().synchronize();  // the copies read the mapped file
        for (size_t s = 0; s < shares_.size(); ++s) {
            const RoutedExpertsFactory& factory =
                options_.layer_split.empty() ? options_.routed_experts : options_.layer_split[s].routed_experts;
            if (!factory) continue;
            STRATA_ASSIGN_OR_RETURN(auto routed, factory(file, shares_[s]->ctx()));
            shares_[s]->set_routed(std::move(routed));
        }
        // The tiers' host work and the profiler's events cannot be replayed. Several shares are
        // one graph: the later shares' streams join the capture through the boundary events.
        const bool tiered = std::any_of(shares_.begin(), shares_.end(), [](const auto& sh) { return sh->routed() != nullptr; });
        // A graph needs every boundary copy to be a direct one (peer access on).
        if (!tiered && !first.profiling() && (shares_.size() == 1 || peer_access_)) {
            decode_graph_ = std::make_unique<gpu::DecodeGraph>(first.ctx(), config_.n_vocab);
        }
        return Status::ok();
    }

    std::string device_name() const override {
        const auto describe = [](const gpu::GpuShard& share) {
            const gpu::DeviceInfo& d = share.ctx().device();
            return fmt::format("{} {} ({})", gpu::runtime_name(), d.name, d.arch);
        };
        uint64_t bytes = 0;
        for (const auto& share : shares_) bytes += share->weight_bytes();
        if (shares_.size() == 1) {
            return fmt::format("{}, {:.2f} GiB of weights in VRAM", describe(*shares_[0]), static_cast<double>(bytes) / (1 << 30));
        }
        std::vector<int> cards;
        for (const auto& share : shares_) {
            if (std::find(cards.begin(), cards.end(), share->ordinal()) == cards.end()) cards.push_back(share->ordinal());
        }
        std::string out = cards.size() == shares_.size()
                              ? fmt::format("layers split over {} GPUs:", shares_.size())
                              : fmt::format("layers split into {} shares over {} GPU(s):", shares_.size(), cards.size());
        for (const auto& share : shares_) {
            out += fmt::format(" [GPU {} {}: layers {}-{}, {:.2f} GiB of weights]", share->ordinal(), describe(*share),
                               share->layer_begin(), share->layer_end() - 1,
                               static_cast<double>(share->weight_bytes()) / (1 << 30));
        }
        out += peer_access_ ? "; activations cross peer to peer" : "; activations cross through host memory";
        return out;
    }

    KvCache make_kv_cache(int64_t n_ctx) const override {
        const ModelConfig& c = config_;
        auto storage = std::make_unique<GpuKvStorage>();
        for (const auto& share : shares_) {
            std::string error;
            auto cache = std::make_unique<gpu::GpuKvCache>(share->pool(), share->layer_count(), n_ctx, c.kv_dim_k(),
                                                           c.kv_dim_v(), options_.kv_f16 ? gpu::KvType::F16 : gpu::KvType::F32,
                                                           &error);
            if (!cache->ok()) {
                // Placement planning (plan/) will refuse such a context before loading; until then, say why.
                std::fprintf(stderr,
                             "strata: the KV cache for %lld positions does not fit on GPU %d: %s (use a smaller --ctx-size)\n",
                             static_cast<long long>(n_ctx), share->ordinal(), error.c_str());
                std::abort();
            }
            storage->caches.push_back(std::move(cache));
        }
        return KvCache(n_ctx, c.kv_dim_k(), c.kv_dim_v(), std::move(storage));
    }

    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& cpu) override {
        auto* storage = dynamic_cast<GpuKvStorage*>(kv.storage());
        STRATA_CHECK(storage != nullptr && storage->caches.size() == shares_.size(),
                     "GPU forward with a KV cache this model did not make (use make_kv_cache)");
        const int64_t n = batch.n_tokens;
        STRATA_CHECK(batch.pos0 + n <= storage->caches[0]->n_ctx(), "batch runs past the KV cache");
        gpu::GpuContext& g = shares_[0]->ctx();
        g.activate();
        if (n == 1 && decode_graph_ && decode_graph_->enabled()) {
            const auto step = [&](const int32_t* io) { return queue_forward(io, io + 1, 1, LogitsFor::Last, *storage, cpu); };
            if (decode_graph_->run(batch.tokens[0], batch.positions[0], graph_addresses(*storage), step, logits)) return;
        }
        auto* tokens = static_cast<int32_t*>(g.scratch(kTokens, static_cast<uint64_t>(n) * sizeof(int32_t)));
        auto* positions = static_cast<int32_t*>(g.scratch(kPositions, static_cast<uint64_t>(n) * sizeof(int32_t)));
        g.upload(tokens, batch.tokens, static_cast<uint64_t>(n) * sizeof(int32_t));
        g.upload(positions, batch.positions, static_cast<uint64_t>(n) * sizeof(int32_t));
        const float* out = queue_forward(tokens, positions, n, which, *storage, cpu);
        const int64_t rows = which == LogitsFor::Last ? 1 : n;
        g.download(logits, out, static_cast<uint64_t>(rows) * config_.n_vocab * sizeof(float));
        g.synchronize();  // the first share's stream waited for the last one, which waited for the rest
        for (auto& share : shares_) share->flush_profile();
    }

private:
    // The shares from the options: the one GPU, or the plan's layer split (checked here, since a
    // split that leaves a layer out or counts one twice would run a different model).
    Status make_shares() {
        const uint32_t n_layer = config_.n_layer;
        if (options_.layer_split.empty()) {
            shares_.push_back(std::make_unique<gpu::GpuShard>(options_.gpu_ordinal, options_.vram_budget, 0, n_layer));
            return Status::ok();
        }
        uint32_t expect = 0;
        for (const GpuLayerShare& s : options_.layer_split) {
            if (s.layer_begin != expect || s.layer_end <= s.layer_begin || s.layer_end > n_layer) {
                return Status::error("--split layer: GPU {} was given layers {}-{}, expected a non-empty run starting at "
                                     "layer {} of {}",
                                     s.ordinal, s.layer_begin, static_cast<int64_t>(s.layer_end) - 1, expect, n_layer);
            }
            expect = s.layer_end;
            shares_.push_back(std::make_unique<gpu::GpuShard>(s.ordinal, s.vram_budget, s.layer_begin, s.layer_end));
        }
        if (expect != n_layer) {
            return Status::error("--split layer: the GPUs hold layers 0-{} of {}", static_cast<int64_t>(expect) - 1, n_layer);
        }
        // The next share reads the previous one's activations, and the first share the last one's
        // logits; peer access makes those direct copies.
        peer_access_ = gpu::enable_peer_access(shares_.front()->ordinal(), shares_.back()->ordinal());
        for (size_t s = 1; s < shares_.size(); ++s) {
            peer_access_ = gpu::enable_peer_access(shares_[s]->ordinal(), shares_[s - 1]->ordinal()) && peer_access_;
        }
        return Status::ok();
    }

    size_t share_of(size_t layer) const {
        for (size_t s = 0; s < shares_.size(); ++s)
            if (layer < shares_[s]->layer_end()) return s;
        return shares_.size() - 1;
    }

    Status upload_layer(const LlamaLayer& src, size_t share_index, GpuLayer& L) {
        gpu::GpuShard& share = *shares_[share_index];
        const AttentionWeights& a = src.attn;
        STRATA_ASSIGN_OR_RETURN(L.attn.norm, share.upload(a.norm, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.wq, share.upload(a.wq, true));
        STRATA_ASSIGN_OR_RETURN(L.attn.wk, share.upload(a.wk, true));
        STRATA_ASSIGN_OR_RETURN(L.attn.wv, share.upload(a.wv, true));
        STRATA_ASSIGN_OR_RETURN(L.attn.wo, share.upload(a.wo, true));
        STRATA_ASSIGN_OR_RETURN(L.attn.bq, share.upload(a.bq, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.bk, share.upload(a.bk, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.bv, share.upload(a.bv, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.bo, share.upload(a.bo, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.q_norm, share.upload(a.q_norm, false));
        STRATA_ASSIGN_OR_RETURN(L.attn.k_norm, share.upload(a.k_norm, false));
        L.moe = src.moe;
        if (!src.moe) {
            STRATA_ASSIGN_OR_RETURN(L.ffn_norm, share.upload(src.ffn.norm, false));
            STRATA_ASSIGN_OR_RETURN(L.gate, share.upload(src.ffn.gate, true));
            STRATA_ASSIGN_OR_RETURN(L.up, share.upload(src.ffn.up, true));
            STRATA_ASSIGN_OR_RETURN(L.down, share.upload(src.ffn.down, true));
            return Status::ok();
        }
        STRATA_ASSIGN_OR_RETURN(L.ffn_norm, share.upload(src.moe_ffn.norm, false));
        STRATA_ASSIGN_OR_RETURN(L.router, share.upload(src.moe_ffn.router, true));
        const bool tiered = options_.layer_split.empty() ? static_cast<bool>(options_.routed_experts)
                                                         : static_cast<bool>(options_.layer_split[share_index].routed_experts);
        if (tiered) return Status::ok();  // the tiers hold them
        STRATA_ASSIGN_OR_RETURN(L.gate_exps, share.upload(src.moe_ffn.gate_exps, true));
        STRATA_ASSIGN_OR_RETURN(L.up_exps, share.upload(src.moe_ffn.up_exps, true));
        STRATA_ASSIGN_OR_RETURN(L.down_exps, share.upload(src.moe_ffn.down_exps, true));
        return Status::ok();
    }

    // Runs f as the op `name`: bracketed by the profiler's events when profiling, else just f.
    template <typename F> void op(const char* name, F&& f) {
        gpu::OpScope scope(cur_->ctx(), name);
        f();
    }

    // What a captured step holds that DecodeGraph does not watch itself: every device address of
    // the cache it reads or writes, and the scratch generations of the shares after the first
    // (their buffers may move while the first share's stay put), as pseudo-addresses.
    std::vector<const void*> graph_addresses(const GpuKvStorage& kv) const {
        std::vector<const void*> a;
        for (size_t s = 0; s < shares_.size(); ++s) {
            const gpu::GpuKvCache& cache = *kv.caches[s];
            for (int64_t il = 0; il < shares_[s]->layer_count(); ++il) {
                a.push_back(cache.keys(il));
                a.push_back(cache.values(il));
            }
            if (s > 0) a.push_back(reinterpret_cast<const void*>(static_cast<uintptr_t>(shares_[s]->ctx().scratch_generation())));
        }
        return a;
    }

    // Queues the whole pass for n tokens (ids and positions on the first share's device); returns
    // the device logits on the first share: the last row's (LogitsFor::Last) or every row's.
    // Nothing here reads a host value that changes from one decode step to the next, so a step
    // can be captured whole, across shares: each later share copies what it needs from the one
    // before after waiting on its event, and the first share waits for the last before the logits.
    const float* queue_forward(const int32_t* tokens, const int32_t* positions, int64_t n, LogitsFor which, GpuKvStorage& kv,
                               CpuContext& cpu) {
        const ModelConfig& c = config_;
        const int64_t e = c.n_embd;
        float* prev_x = nullptr;
        float* prev_h = nullptr;
        void* prev_hq = nullptr;
        const int32_t* prev_pos = nullptr;
        float* h = nullptr;
        for (size_t s = 0; s < shares_.size(); ++s) {
            cur_ = shares_[s].get();
            gpu::GpuContext& g = cur_->ctx();
            g.activate();
            float* x = g.scratch_floats(kResidual, static_cast<uint64_t>(n * e));
            h = g.scratch_floats(kNormed, static_cast<uint64_t>(n * e));
            // Small steps take the int8 matrix-vector kernel: every norm that writes h also writes it
            // quantized, once for all the products that read it.
            hq_ = nullptr;
            void* hq_buffer = nullptr;
            if (takes_int8(n, e)) {
                hq_buffer = g.scratch(kQ8Normed, gpu::gpu_q8_bytes(n, e));
                hq_view_ = gpu::gpu_q8_view(hq_buffer, n, e);
                hq_ = &hq_view_;
            }
            const int32_t* pos = positions;
            if (s == 0) {
                op("get_rows token_embd", [&] { gpu::gpu_get_rows(token_embd_, tokens, n, x, g); });
                // Each sub-layer leaves h = the next norm of x: the first layer's input norm is the
                // only one computed alone.
                const float* first_norm = layers_.empty() ? output_norm_.f32() : layers_[0].attn.norm.f32();
                op("rms_norm attn_norm", [&] { gpu::gpu_rms_norm(x, first_norm, n, e, c.rms_eps, h, g, hq_); });
            } else {
                auto* p = static_cast<int32_t*>(g.scratch(kPositions, static_cast<uint64_t>(n) * sizeof(int32_t)));
                pos = p;
                gpu::GpuShard& prev = *shares_[s - 1];
                prev.done().make_wait(g.stream());
                op("copy activations", [&] {
                    const int from = prev.ordinal(), to = cur_->ordinal();
                    const uint64_t bytes = static_cast<uint64_t>(n * e) * sizeof(float);
                    gpu::copy_peer_async(p, to, prev_pos, from, static_cast<uint64_t>(n) * sizeof(int32_t), g.stream());
                    gpu::copy_peer_async(x, to, prev_x, from, bytes, g.stream());
                    gpu::copy_peer_async(h, to, prev_h, from, bytes, g.stream());
                    if (hq_buffer) gpu::copy_peer_async(hq_buffer, to, prev_hq, from, gpu::gpu_q8_bytes(n, e), g.stream());
                });
            }
            gpu::GpuKvCache& cache = *kv.caches[s];
            for (uint32_t il = cur_->layer_begin(); il < cur_->layer_end(); ++il) {
                const GpuLayer& L = layers_[il];
                const float* next_norm = il + 1 == cur_->layer_end()
                                             ? (s + 1 < shares_.size() ? boundary_norms_[s].f32() : output_norm_.f32())
                                             : layers_[il + 1].attn.norm.f32();
                const int64_t local = il - cur_->layer_begin();
                attention(L.attn, x, h, n, pos, cache, local, L.ffn_norm.f32());
                if (L.moe) moe_ffn(L, il, x, h, n, next_norm, cpu);
                else dense_ffn(L, x, h, n, next_norm);
            }
            if (cur_->routed()) cur_->routed()->end_forward(g);
            if (s + 1 < shares_.size()) cur_->done().record(g.stream());
            prev_x = x, prev_h = h, prev_hq = hq_buffer, prev_pos = pos;
        }
        gpu::GpuContext& g = cur_->ctx();
        const int64_t first = which == LogitsFor::Last ? n - 1 : 0;
        const int64_t rows = n - first;
        const uint64_t logit_count = static_cast<uint64_t>(rows) * c.n_vocab;
        float* out = g.scratch_floats(kLogits, logit_count);
        gpu::GpuQ8Rows last;
        if (hq_) last = gpu::gpu_q8_rows_from(*hq_, first);
        op("matmul output", [&] { gpu::gpu_matmul(output_, 0, h + first * e, rows, out, g, hq_ ? &last : nullptr); });
        if (shares_.size() == 1) return out;
        // The logits go back to the first share, whose stream thereby waits for every share: the
        // caller (or a captured step) synchronizes one stream and downloads from one device.
        cur_->done().record(g.stream());
        gpu::GpuShard& home = *shares_.front();
        home.ctx().activate();
        cur_->done().make_wait(home.ctx().stream());
        float* home_out = home.ctx().scratch_floats(kLogits, logit_count);
        gpu::copy_peer_async(home_out, home.ordinal(), out, cur_->ordinal(), logit_count * sizeof(float), home.ctx().stream());
        return home_out;
    }

private:
    // x += attn(h), h = norm(x) on entry, as attention_block (model/blocks/attention_block.cpp);
    // leaves h = ffn_norm(x) of the updated x.
    void attention(const GpuAttentionWeights& w, float* x, float* h, int64_t n, const int32_t* positions,
                   gpu::GpuKvCache& cache, int64_t layer, const float* ffn_norm) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = cur_->ctx();
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
        gpu::GpuContext& g = cur_->ctx();
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
        gpu::GpuContext& g = cur_->ctx();
        const int64_t e = c.n_embd, n_exp = c.n_expert, k = c.n_expert_used;
        const int64_t pairs = n * k;
        float* router = g.scratch_floats(kRouter, static_cast<uint64_t>(n * n_exp));
        auto* ids = static_cast<int32_t*>(g.scratch(kExpertIds, static_cast<uint64_t>(pairs) * sizeof(int32_t)));
        float* weights = g.scratch_floats(kExpertWeights, static_cast<uint64_t>(pairs));
        // One token with every expert in VRAM: router, routing and plan in one launch.
        gpu::RoutedExperts* routed = cur_->routed();
        const bool fused_routing = n == 1 && !routed && cur_->route_counter(layer) != nullptr;
        if (!fused_routing) op("matmul ffn_gate_inp", [&] { gpu::gpu_matmul(L.router, 0, h, n, router, g, hq_); });
        if (routed) {  // experts not all in VRAM: the tiers compute them (GPU hits, CPU, streamed)
            op("moe_route", [&] { gpu::gpu_moe_route_softmax_topk(router, n, n_exp, k, c.norm_topk_prob, ids, weights, g); });
            op("routed_experts", [&] {
                routed->forward(gpu::RoutedExpertsStep{layer, n, e, k, h, hq_, ids, weights, x, next_norm, c.rms_eps, h, hq_}, g,
                                 cpu);
            });
            return;
        }
        gpu::MoePlan plan;
        if (fused_routing) {
            op("moe_router_route_plan_single", [&] {
                plan = gpu::gpu_moe_router_route_plan_single(L.router, h, router, k, c.norm_topk_prob, ids, weights, kMoePlan,
                                                             cur_->route_counter(layer), g);
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
        op("quantize_q8", [&] { out = gpu::gpu_quantize_q8(x, rows, width, slot, cur_->ctx()); });
        return &out;
    }

    bool takes_int8(int64_t n, int64_t width) const {
        return int8_matvec_ && n < gpu::kGpuTiledMinTokens && width % 32 == 0;
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
    // Declaration order is destruction order reversed: the graph (which holds the first share's
    // context) goes before the shares.
    std::vector<std::unique_ptr<gpu::GpuShard>> shares_;
    gpu::GpuShard* cur_ = nullptr;                    // the share whose layers are being queued
    std::vector<DeviceWeight> boundary_norms_;        // per share but the last: the next share's first norm
    bool peer_access_ = false;
    std::unique_ptr<gpu::DecodeGraph> decode_graph_;  // one-token steps as graphs; one share, no tiers, no profiling
    DeviceWeight token_embd_, output_norm_, output_;  // on the first, the last and the last share
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
