// qwen4exp (Qwen3.8-Flash-Next) on the GPU: the recipe of model/arch/qwen4exp.cpp with the hybrid
// blocks of gpu_hybrid.h and the ops of gpu_ops_qwen4exp.h, reading the same weight table
// (model/arch/qwen4exp_weights.h). Per token the residual is hc streams of n_embd (scratch
// kStreams, rows of hc·n_embd), each starting as the embedding; per layer:
//   if PLE: R += PLE(R, table rows)         the rows looked up on the host (fill_host_extras)
//   h, a = HC_attn(R);  R_s += a_s · mixer(h)       (DeltaNet, or QSA attention with its indexer)
//   h, a = HC_ffn(R);   R_s += a_s · (shared(h) + MoE(h))
// and the head reads h = HC_final(R) (no output norm). The framework's residual x only carries
// the embedding rows in; its norms are ones (the mixers normalize the streams themselves).
// The PLE table (~29 GB in the real files) never goes to VRAM: each token's rows are looked up on
// the host (model/ple_table.h: from RAM, the SSD or the mapping) with the embedding row and go up
// with it, so a captured decode step replays them too.
// The QSA layers' index keys live beside the KV cache (GpuKvStorage::index_keys).
// One GPU: the wide residual is not carried over a --split (refused at load).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/matmul.h"
#include "model/arch/qwen4exp_weights.h"
#include "model/gpu/gpu_hybrid.h"
#include "model/ple_table.h"

namespace strata {

namespace {

using gpu::DeviceWeight;

enum Qwen4ExpSlot : int {
    kStreams = gpu::kFirstHybridArchSlot, kHcNormed, kHcLow, kHcMix, kInject, kBlockOut, kQ8HcNormed, kIndexQ,
    kIndexK, kIndexScores, kIndexBlocks, kPleRows, kQ8PleRows, kPleKey, kPleValue, kPleQuery, kPleGated, kPleNormed,
};

struct GpuHyperConnection {
    DeviceWeight norm, down, up, inject;  // inject empty for the final mixer
};
struct GpuIndexer {
    DeviceWeight wq, wk, q_norm, k_norm;
};
struct GpuPle {
    DeviceWeight key, value, norm_key, norm_query, norm_conv, conv;
};
struct GpuQwen4ExpLayer {
    bool recurrent = false, has_ple = false;
    GpuHyperConnection hc_attn, hc_ffn;
    gpu::GpuDeltaNetWeights delta;  // recurrent layers
    gpu::GpuAttentionWeights attn;  // QSA layers: wq is the [query | gate] projection
    GpuIndexer indexer;             // ... with a compress ratio
    GpuPle ple;
    gpu::GpuMoeWeights experts;
    gpu::GpuDenseFfnWeights shared;
    DeviceWeight shared_gate_inp;
};

// The largest indexer the QSA kernels take (ops_qsa.cu holds a query and a pooled key in shared memory).
constexpr int64_t kMaxIndexerDim = 1024, kMaxIndexerQuery = 4096;

class GpuQwen4Exp final : public gpu::GpuHybridBlocks {
public:
    using GpuHybridBlocks::GpuHybridBlocks;

    Status load(const GgufFile& file) {
        const ModelConfig& c = config_;
        if (!options_.layer_split.empty() || !options_.tensor_split.empty()) {
            return Status::error("{}: {} runs on one GPU: its hyper-connected residual is not carried across a "
                                 "--split yet; leave --split off (the expert tiers hold what does not fit), or run "
                                 "with --device cpu",
                                 file.path(), c.arch_name());
        }
        STRATA_TRY(check_shapes(file));
        STRATA_TRY(make_shares());
        STRATA_TRY(load_qwen4exp_weights(file, c, w_));
        gpu::GpuShard& sh = share(0);
        layers_.resize(w_.layers.size());
        std::vector<bool> has_kv;
        for (size_t il = 0; il < w_.layers.size(); ++il) {
            STRATA_TRY(upload_layer(w_.layers[il], sh, layers_[il]));
            has_kv.push_back(!w_.layers[il].recurrent);
        }
        STRATA_TRY(upload_mixer(w_.output_hc, sh, output_hc_));
        ones_.assign(static_cast<size_t>(c.n_embd), 1.0f);
        Weight ones;
        ones.data = reinterpret_cast<const uint8_t*>(ones_.data());
        ones.type = TensorType::F32;
        ones.ne[0] = c.n_embd;
        ones.row_bytes = static_cast<uint64_t>(c.n_embd) * sizeof(float);
        STRATA_ASSIGN_OR_RETURN(ones_device_, sh.upload(ones, false));
        set_kv_layers(has_kv);
        STRATA_TRY(finish_load(file, w_.token_embd, ones, w_.output, std::vector<Weight>(c.n_layer, ones)));
        return place_ple_table(file, PleTableOptions{});
    }

    KvCache make_kv_cache(int64_t n_ctx) const override {
        const ModelConfig& c = config_;
        KvCache kv = GpuTransformer::make_kv_cache(n_ctx);
        if (c.indexer.head_dim == 0) return kv;
        auto* storage = dynamic_cast<gpu::GpuKvStorage*>(kv.storage());
        std::vector<int64_t> ratios(c.n_layer, 0);
        for (uint32_t il = 0; il < c.n_layer; ++il) ratios[il] = layers_[il].indexer.wq ? c.indexer.ratio(il) : 0;
        std::string error;
        storage->index_keys = std::make_unique<gpu::GpuIndexKeys>(share(0).pool(), ratios, n_ctx, c.indexer.head_dim, &error);
        if (!storage->index_keys->ok()) {
            // As the KV cache itself: the plan counts the index keys and refuses what does not fit.
            std::fprintf(stderr, "strata: the QSA index keys for %lld positions do not fit on the GPU: %s (use a "
                                 "smaller --ctx-size)\n",
                         static_cast<long long>(n_ctx), error.c_str());
            std::abort();
        }
        return kv;
    }

    RecurrentState make_recurrent_state() const override {
        const ModelConfig& c = config_;
        std::unique_ptr<gpu::GpuRecurrentStorage> state = make_device_state();
        if (c.ple.layer >= 0) {
            gpu::GpuShard& sh = share(0);
            std::string error;
            state->ple_ctx = &sh.ctx();
            state->ple_conv = sh.pool().allocate(static_cast<uint64_t>(ple_history_floats(c)) * sizeof(float), &error);
            STRATA_CHECK(state->ple_conv, "the PLE history of a sequence does not fit on the GPU");
            state->ple_eos = c.ple.eos_token;
            state->ple_tokens.assign(static_cast<size_t>(ple_history_tokens(c)), c.ple.eos_token);
            state->clear();
        }
        return RecurrentState(std::move(state));
    }

private:
    // What the GPU kernels take, checked before anything is uploaded.
    Status check_shapes(const GgufFile& file) const {
        const ModelConfig& c = config_;
        STRATA_TRY(check_delta_net_shape());
        const int64_t d = c.indexer.head_dim, q = int64_t{c.indexer.n_head} * d;
        if (d > kMaxIndexerDim || q > kMaxIndexerQuery || c.head_dim_k > gpu::kGpuMaxHeadDim ||
            c.head_dim_v > gpu::kGpuMaxHeadDim) {
            return Status::error("{}: QSA heads of {} values or an indexer of {} heads of {} are beyond the GPU kernels "
                                 "(at most {} per head, {} per indexer key and {} per indexer query); run with "
                                 "--device cpu",
                                 file.path(), c.head_dim_k, c.indexer.n_head, d, gpu::kGpuMaxHeadDim, kMaxIndexerDim,
                                 kMaxIndexerQuery);
        }
        return Status::ok();
    }

    Status upload_mixer(const HyperConnectionWeights& src, gpu::GpuShard& sh, GpuHyperConnection& o) {
        STRATA_ASSIGN_OR_RETURN(o.norm, sh.upload(src.norm, false));
        STRATA_ASSIGN_OR_RETURN(o.down, sh.upload(src.down, true));
        STRATA_ASSIGN_OR_RETURN(o.up, sh.upload(src.up, true));
        STRATA_ASSIGN_OR_RETURN(o.inject, sh.upload(src.inject, true));
        return Status::ok();
    }

    Status upload_layer(const Qwen4ExpLayer& src, gpu::GpuShard& sh, GpuQwen4ExpLayer& L) {
        L.recurrent = src.recurrent;
        L.has_ple = src.has_ple;
        STRATA_TRY(upload_mixer(src.hc_attn, sh, L.hc_attn));
        STRATA_TRY(upload_mixer(src.hc_ffn, sh, L.hc_ffn));
        if (src.recurrent) {
            STRATA_TRY(upload_delta_net(src.delta, sh, L.delta));
        } else {
            STRATA_TRY(upload_gated_attention(src.attn, sh, L.attn));
            const QsaIndexerWeights& ix = src.attn.indexer;
            STRATA_ASSIGN_OR_RETURN(L.indexer.wq, sh.upload(ix.wq, true));
            STRATA_ASSIGN_OR_RETURN(L.indexer.wk, sh.upload(ix.wk, true));
            STRATA_ASSIGN_OR_RETURN(L.indexer.q_norm, sh.upload(ix.q_norm, false));
            STRATA_ASSIGN_OR_RETURN(L.indexer.k_norm, sh.upload(ix.k_norm, false));
        }
        if (src.has_ple) {  // all but the table, which stays in RAM
            const PleWeights& p = src.ple;
            STRATA_ASSIGN_OR_RETURN(L.ple.key, sh.upload(p.key, true));
            STRATA_ASSIGN_OR_RETURN(L.ple.value, sh.upload(p.value, true));
            STRATA_ASSIGN_OR_RETURN(L.ple.norm_key, sh.upload(p.norm_key, false));
            STRATA_ASSIGN_OR_RETURN(L.ple.norm_query, sh.upload(p.norm_query, false));
            STRATA_ASSIGN_OR_RETURN(L.ple.norm_conv, sh.upload(p.norm_conv, false));
            STRATA_ASSIGN_OR_RETURN(L.ple.conv, sh.upload(p.conv, false));
        }
        STRATA_TRY(upload_shared_expert(src.shared, sh, L.shared, L.shared_gate_inp));
        return upload_experts(src.moe, {}, 0, L.experts);
    }

    const float* input_norm(uint32_t) const override { return ones_device_.f32(); }

    Status place_ple_table(const GgufFile& file, const PleTableOptions& options) override {
        if (config_.ple.layer < 0) return Status::ok();
        STRATA_ASSIGN_OR_RETURN(ple_table_, PleTable::open(file, w_.layers[static_cast<size_t>(config_.ple.layer)].ple.table, options));
        return Status::ok();
    }
    const PleTable* ple_table() const override { return ple_table_.get(); }

    int64_t host_extra_width() const override {
        const PleConfig& p = config_.ple;
        return p.layer >= 0 ? int64_t{p.n_heads()} * p.row_width : 0;
    }

    // Each sequence's n-gram rows from its token history, then the rows themselves (dequantized
    // from the table's tier): n rows of n_heads · row_width.
    void fill_host_extras(const int32_t* tokens, int64_t n, float* out, CpuContext& cpu) override {
        const PleConfig& p = config_.ple;
        const int64_t heads = p.n_heads();
        table_rows_.resize(static_cast<size_t>(n * heads));
        for (const SeqRows& s : seqs_) {
            gpu::GpuRecurrentStorage& st = device_state(s);
            ple_table_rows(p, tokens + s.first, s.n, st.ple_tokens.data(), table_rows_.data() + s.first * heads);
        }
        ple_table_->get_rows(table_rows_.data(), n * heads, out, &cpu.pool());
    }

    void add_graph_addresses(std::vector<const void*>& a) const override {
        GpuHybridBlocks::add_graph_addresses(a);
        for (const SeqRows& s : seqs_) {
            const gpu::GpuIndexKeys* keys = s.kv->index_keys.get();
            if (keys == nullptr) continue;
            for (uint32_t il = 0; il < config_.n_layer; ++il) {
                if (keys->ratio(il) > 0) a.push_back(keys->raw(il)), a.push_back(keys->pooled(il));
            }
        }
    }

    void queue_layer(uint32_t il, float* x, float* h, int64_t n, const int32_t* positions, int64_t kv_layer,
                     const float*, CpuContext& cpu) override {
        const ModelConfig& c = config_;
        const GpuQwen4ExpLayer& L = layers_[il];
        gpu::GpuContext& g = cur_->ctx();
        const int64_t e = c.n_embd, hc = c.hc_count;
        float* R = g.scratch_floats(kStreams, static_cast<uint64_t>(n * hc * e));
        if (il == 0) op("hc_broadcast", [&] { gpu::gpu_hc_broadcast(x, n, hc, e, R, g); });
        if (L.has_ple) ple(L.ple, R, n);

        const float* a = mix(L.hc_attn, R, n, h);
        float* mixed = L.recurrent ? delta_net(L.delta, il, h, n) : qsa_attention(L, il, h, n, positions, kv_layer);
        op("hc_combine attn", [&] { gpu::gpu_hc_combine(mixed, a, n, hc, e, R, g); });

        a = mix(L.hc_ffn, R, n, h);
        // As the CPU: the routed experts and the gated shared expert summed into zeros.
        float* y = g.scratch_floats(kBlockOut, static_cast<uint64_t>(n * e));
        op("zero ffn_out", [&] { gpu::memset_async(y, 0, static_cast<uint64_t>(n * e) * sizeof(float), g.stream()); });
        shared_expert(L.shared, L.shared_gate_inp, y, h, n);
        // moe_ffn leaves h = a norm of y (ones): not read again, the next mixer rewrites h.
        moe_ffn(L.experts, il, y, h, n, ones_device_.f32(), cpu);
        op("hc_combine ffn", [&] { gpu::gpu_hc_combine(y, a, n, hc, e, R, g); });

        if (il + 1 == c.n_layer) mix(output_hc_, R, n, h);  // the head reads h
    }

    // h = the mixer's block input (and hq_ its int8 copy); returns the streams' output weights
    // (kInject), or null for the final mixer.
    const float* mix(const GpuHyperConnection& w, const float* R, int64_t n, float* h) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = cur_->ctx();
        const int64_t e = c.n_embd, hc = c.hc_count, wide = hc * e, r = c.hc_lowrank;
        float* normed = g.scratch_floats(kHcNormed, static_cast<uint64_t>(n * wide));
        op("grouped_rms_norm hc", [&] { gpu::gpu_grouped_rms_norm(R, w.norm.f32(), n, hc, e, c.rms_eps, normed, g); });
        gpu::GpuQ8Rows nq;
        const gpu::GpuQ8Rows* nq_used = quantized(normed, n, wide, n, kQ8HcNormed, nq);
        float* low = g.scratch_floats(kHcLow, static_cast<uint64_t>(n * r));
        op("matmul hc_down", [&] { gpu::gpu_matmul(w.down, 0, normed, n, low, g, nq_used); });
        op("hc_low_activation", [&] { gpu::gpu_hc_low_activation(low, n * r, hc, g); });
        float* m = g.scratch_floats(kHcMix, static_cast<uint64_t>(n * wide));
        op("matmul hc_up", [&] { gpu::gpu_matmul(w.up, 0, low, n, m, g); });
        op("hc_mix_streams", [&] { gpu::gpu_hc_mix_streams(m, normed, n, hc, e, h, g); });
        if (hq_) op("quantize_q8 h", [&] { gpu::gpu_quantize_q8_rows(h, 0, n, *hq_, g); });
        if (!w.inject) return nullptr;
        float* a = g.scratch_floats(kInject, static_cast<uint64_t>(n * hc));
        op("matmul hc_inject", [&] { gpu::gpu_matmul(w.inject, 0, normed, n, a, g, nq_used); });
        op("hc_inject_weights", [&] { gpu::gpu_hc_inject_weights(a, n * hc, hc, g); });
        return a;
    }

    // A QSA layer: the indexer's keys into each sequence's planes, its selection where a query
    // has more complete blocks than it keeps, then the gated attention over the selection. A
    // prompt whose queries all read everything takes the dense attention (flash tiles); one-token
    // steps always go through the selection's kernels, whose choice is made on the device (a
    // captured step replays at any depth).
    float* qsa_attention(const GpuQwen4ExpLayer& L, uint32_t il, float* h, int64_t n, const int32_t* positions,
                         int64_t kv_layer) {
        if (!L.indexer.wq) return gated_attention(L.attn, h, n, positions, kv_layer);
        const ModelConfig& c = config_;
        gpu::GpuContext& g = cur_->ctx();
        const int64_t heads = c.indexer.n_head, d = c.indexer.head_dim, ratio = c.indexer.ratio(il);
        const int64_t keep = c.indexer.top_k / ratio;
        float* iq = g.scratch_floats(kIndexQ, static_cast<uint64_t>(n * heads * d));
        float* ik = g.scratch_floats(kIndexK, static_cast<uint64_t>(n * d));
        op("matmul indexer_q", [&] { gpu::gpu_matmul(L.indexer.wq, 0, h, n, iq, g, hq_); });
        op("matmul indexer_k", [&] { gpu::gpu_matmul(L.indexer.wk, 0, h, n, ik, g, hq_); });
        op("rms_norm indexer_q", [&] { gpu::gpu_rms_norm(iq, L.indexer.q_norm.f32(), n * heads, d, c.rms_eps, iq, g); });
        gpu::GpuRope rope = rope_params(c.rope_dims);
        rope.head_dim = d;
        op("rope indexer_q", [&] { gpu::gpu_rope(iq, n, heads, rope, positions, g); });
        bool selects = n == 1;
        int64_t stride = 1;
        for (const SeqRows& s : seqs_) {
            gpu::GpuIndexKeys& keys = index_keys(s);
            op("qsa_store_keys", [&] {
                gpu::gpu_qsa_store_keys(ik + s.first * d, s.n, positions + s.first, keys, il, L.indexer.k_norm.f32(),
                                        c.rms_eps, rope, g);
            });
            selects = selects || (s.pos0 + s.n) / ratio > keep;
            stride = std::max(stride, keys.n_ctx() / ratio);
        }
        if (!selects) return gated_attention(L.attn, h, n, positions, kv_layer);
        auto* blocks = static_cast<int32_t*>(g.scratch(kIndexBlocks, static_cast<uint64_t>(n * keep) * sizeof(int32_t)));
        for (const SeqRows& s : seqs_) {
            gpu::GpuIndexKeys& keys = index_keys(s);
            const int64_t rows = std::min(s.n, gpu::gpu_qsa_select_chunk(keys.n_ctx(), ratio));
            float* scores = g.scratch_floats(kIndexScores, static_cast<uint64_t>(rows * stride));
            op("qsa_select", [&] {
                gpu::gpu_qsa_select(iq + s.first * heads * d, s.n, positions + s.first, heads, keys, il, keep, scores,
                                    blocks + s.first * keep, g);
            });
        }
        const gpu::GpuKeySelection selection{ratio, keep, blocks};
        return gated_attention(L.attn, h, n, positions, kv_layer, &selection);
    }

    static gpu::GpuIndexKeys& index_keys(const SeqRows& s) {
        STRATA_CHECK(s.kv->index_keys != nullptr, "a QSA layer's cache without index keys (use make_kv_cache)");
        return *s.kv->index_keys;
    }

    // R += PLE(R, the step's table rows), as ple_block.
    void ple(const GpuPle& w, float* R, int64_t n) {
        const ModelConfig& c = config_;
        const PleConfig& p = c.ple;
        gpu::GpuContext& g = cur_->ctx();
        const int64_t e = c.n_embd, hc = c.hc_count, wide = hc * e, width = host_extra_width();
        float* rows = g.scratch_floats(kPleRows, static_cast<uint64_t>(n * width));
        op("upload ple rows", [&] { g.upload(rows, host_extras_, static_cast<uint64_t>(n * width) * sizeof(float)); });
        gpu::GpuQ8Rows rq;
        const gpu::GpuQ8Rows* rq_used = quantized(rows, n, width, n, kQ8PleRows, rq);
        float* key = g.scratch_floats(kPleKey, static_cast<uint64_t>(n * wide));
        float* value = g.scratch_floats(kPleValue, static_cast<uint64_t>(n * e));
        float* query = g.scratch_floats(kPleQuery, static_cast<uint64_t>(n * wide));
        op("matmul ple_key", [&] { gpu::gpu_matmul(w.key, 0, rows, n, key, g, rq_used); });
        op("matmul ple_value", [&] { gpu::gpu_matmul(w.value, 0, rows, n, value, g, rq_used); });
        op("grouped_rms_norm ple_key", [&] { gpu::gpu_grouped_rms_norm(key, w.norm_key.f32(), n, hc, e, c.rms_eps, key, g); });
        op("grouped_rms_norm ple_query", [&] {
            gpu::gpu_grouped_rms_norm(R, w.norm_query.f32(), n, hc, e, c.rms_eps, query, g);
        });
        float* gated = g.scratch_floats(kPleGated, static_cast<uint64_t>(n * wide));
        op("ple_gate", [&] { gpu::gpu_ple_gate(key, query, value, n, hc, e, gated, g); });
        float* normed = g.scratch_floats(kPleNormed, static_cast<uint64_t>(n * wide));
        op("grouped_rms_norm ple_conv", [&] {
            gpu::gpu_grouped_rms_norm(gated, w.norm_conv.f32(), n, hc, e, c.rms_eps, normed, g);
        });
        for (const SeqRows& s : seqs_) {
            op("ple_conv_add", [&] {
                gpu::gpu_ple_conv_add(normed + s.first * wide, gated + s.first * wide, s.n, wide, w.conv.f32(),
                                      p.conv_kernel, p.ngram_size, device_state(s).ple_conv.as<float>(),
                                      R + s.first * wide, g);
            });
        }
    }

    Qwen4ExpWeights w_;  // host views: the PLE table is read from here every step
    std::vector<GpuQwen4ExpLayer> layers_;
    GpuHyperConnection output_hc_;
    std::vector<float> ones_;    // the framework's norms (ones: the mixers normalize)
    DeviceWeight ones_device_;
    std::vector<int32_t> table_rows_;  // a step's PLE row ids, kept from step to step
    std::unique_ptr<PleTable> ple_table_;  // where those rows are read from (RAM, SSD or the mapping)
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpu_qwen4exp(const GgufFile& file, const ModelConfig& config,
                                                 const ComputeOptions& options) {
    return gpu::load_gpu_pass<GpuQwen4Exp>(file, config, options);
}

}  // namespace strata
