// Qwen3-Next and Qwen3.5-MoE on the GPU: the recipe of model/arch/qwen3next.cpp — gated DeltaNet
// layers with a gated full-attention layer every few, each followed by the routed experts and a
// sigmoid-gated shared expert — with the blocks of gpu_transformer.h and the DeltaNet ops of
// gpu_ops_delta_net.h, reading the same weight table (model/arch/qwen3next_weights.h).
// Each sequence's recurrent state (conv history and delta-rule matrices of every DeltaNet layer)
// lives in VRAM on the share that holds the layer, owned by the session's RecurrentState; the KV
// cache holds rows for the attention layers only. The routed experts go through the same code as
// qwen3moe's, expert tiers included.
// Under --split tensor the gated attention layers share out their heads (and KV cache) and every
// layer its routed experts, as the Llama family's; the DeltaNet layers (whose recurrent state and
// short convolution run over all heads) and the shared expert stay whole on the first rank, which
// also holds every sequence's recurrent state, the other ranks adding empty parts to the
// all-reduce.
#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "backend/gpu/gpu_ops_delta_net.h"
#include "model/gpu/gpu_transformer.h"
#include "model/arch/qwen3next_weights.h"
#include "model/weight_slices.h"

namespace strata {

namespace {

using gpu::DeviceWeight;

// Scratch slots of these layers (after the shared ones).
enum HybridSlot : int {
    kMixed = gpu::kFirstArchSlot, kZ, kBetaAlpha, kConvOut, kGates, kCore, kQGate, kAttnGate,
    kSharedLogit, kQ8Core,
};

struct GpuDeltaNetWeights {
    DeviceWeight wqkv, wz, wba, wbeta, walpha, wout;
    DeviceWeight conv, dt_bias, a, ssm_norm;  // F32
};

struct GpuHybridLayer {
    bool recurrent = false;
    DeviceWeight attn_norm;
    GpuDeltaNetWeights delta;       // recurrent layers
    gpu::GpuAttentionWeights attn;  // full-attention layers: wq is the [query | gate] projection
    DeviceWeight post_norm;
    gpu::GpuMoeWeights experts;
    gpu::GpuDenseFfnWeights shared;
    DeviceWeight shared_gate_inp;
};

// One sequence's recurrent state in VRAM: per DeltaNet layer, its conv history and delta-rule
// matrices, on the device of the share that holds the layer.
class GpuRecurrentStorage final : public RecurrentStateStorage {
public:
    struct Layer {
        gpu::DeviceBuffer conv, ssm;
        gpu::GpuContext* ctx = nullptr;
    };
    std::vector<Layer> layers;  // by model layer; empty buffers for attention layers

    void clear() override {
        for (Layer& l : layers) {
            if (!l.conv) continue;
            l.ctx->activate();
            gpu::memset_async(l.conv.data(), 0, l.conv.bytes(), l.ctx->stream());
            gpu::memset_async(l.ssm.data(), 0, l.ssm.bytes(), l.ctx->stream());
            l.ctx->synchronize();
        }
    }
    uint64_t bytes() const override {
        uint64_t total = 0;
        for (const Layer& l : layers) total += l.conv.bytes() + l.ssm.bytes();
        return total;
    }
};

class GpuHybrid final : public gpu::GpuTransformer {
public:
    using GpuTransformer::GpuTransformer;

    Status load(const GgufFile& file) {
        STRATA_TRY(make_shares());
        HybridWeights w;
        STRATA_TRY(load_hybrid_weights(file, config_, w));
        const ModelConfig& c = config_;
        if (c.ssm_d_state > gpu::kGpuMaxDeltaNetHeadDim || c.ssm_d_inner / c.ssm_dt_rank > gpu::kGpuMaxDeltaNetHeadDim ||
            c.ssm_conv_kernel > gpu::kGpuMaxConvKernel) {
            return Status::error("{}: DeltaNet heads of {}/{} values or a convolution of {} taps are beyond the GPU "
                                 "kernels (at most {} and {}); run with --device cpu",
                                 c.arch_name(), c.ssm_d_state, c.ssm_d_inner / c.ssm_dt_rank, c.ssm_conv_kernel,
                                 gpu::kGpuMaxDeltaNetHeadDim, gpu::kGpuMaxConvKernel);
        }
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
            if (L.recurrent && L.delta.v_order == VHeadOrder::Tiled) v_order_ = gpu::GpuVHeadOrder::Tiled;
        }
        set_kv_layers(has_kv);
        STRATA_TRY(finish_load(file, w.token_embd, w.output_norm, w.output, input_norms));
        column_copies_.clear();  // uploaded: finish_load waited for the copies
        return Status::ok();
    }

    RecurrentState make_recurrent_state() const override {
        const ModelConfig& c = config_;
        const uint64_t conv_floats = uint64_t(c.ssm_conv_kernel - 1) * conv_channels();
        const uint64_t ssm_floats = uint64_t(c.ssm_dt_rank) * c.ssm_d_state * (c.ssm_d_inner / c.ssm_dt_rank);
        auto storage = std::make_unique<GpuRecurrentStorage>();
        storage->layers.resize(c.n_layer);
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            if (!layers_[0][il].recurrent) continue;
            gpu::GpuShard& sh = share(share_of(il));
            GpuRecurrentStorage::Layer& l = storage->layers[il];
            std::string error;
            l.ctx = &sh.ctx();
            l.conv = sh.pool().allocate(conv_floats * sizeof(float), &error);
            if (l.conv) l.ssm = sh.pool().allocate(ssm_floats * sizeof(float), &error);
            // The planner counts these states in VRAM; a plan that fits leaves room for them.
            STRATA_CHECK(l.conv && l.ssm, "the recurrent state of a sequence does not fit on the GPU");
        }
        storage->clear();
        return RecurrentState(std::move(storage));
    }

    // One sequence at a time through the model's own state; a batch at position 0 starts over.
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& cpu) override {
        STRATA_CHECK(batch.pos0 == 0 || &kv == own_state_kv_,
                     "plain forward() of a hybrid model serves one sequence at a time: use forward_with_state()");
        own_state_kv_ = &kv;
        if (own_state_.empty()) own_state_ = make_recurrent_state();  // only callers of plain forward() pay for it
        forward_with_state(batch, kv, own_state_, logits, which, cpu);
    }

    void forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits, LogitsFor which,
                            CpuContext& cpu) override {
        if (batch.pos0 == 0) state.clear();
        STRATA_CHECK(batch.pos0 == state.n_past(),
                     "a recurrent state cannot be rewound: the batch must start where the last one ended");
        forward_one(batch, kv, &state, logits, which, cpu);
        state.advance(batch.n_tokens);
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

    int64_t conv_channels() const {
        const ModelConfig& c = config_;
        return 2 * int64_t{c.ssm_n_group} * c.ssm_d_state + c.ssm_d_inner;
    }

    Status upload_layer(const HybridLayer& src, size_t share_index, GpuHybridLayer& L) {
        gpu::GpuShard& sh = share(share_index);
        L.recurrent = src.recurrent;
        if (src.recurrent) {
            const GatedDeltaNetWeights& d = src.delta;
            GpuDeltaNetWeights& o = L.delta;
            STRATA_ASSIGN_OR_RETURN(L.attn_norm, sh.upload(d.norm, false));
            STRATA_ASSIGN_OR_RETURN(o.wqkv, sh.upload(d.wqkv, true));
            STRATA_ASSIGN_OR_RETURN(o.wz, sh.upload(d.wz, true));
            STRATA_ASSIGN_OR_RETURN(o.wba, sh.upload(d.wba, true));
            STRATA_ASSIGN_OR_RETURN(o.wbeta, sh.upload(d.wbeta, true));
            STRATA_ASSIGN_OR_RETURN(o.walpha, sh.upload(d.walpha, true));
            STRATA_ASSIGN_OR_RETURN(o.wout, sh.upload(d.wout, true));
            STRATA_ASSIGN_OR_RETURN(o.conv, sh.upload(d.conv, false));
            STRATA_ASSIGN_OR_RETURN(o.dt_bias, sh.upload(d.dt_bias, false));
            STRATA_ASSIGN_OR_RETURN(o.a, sh.upload(d.a, false));
            STRATA_ASSIGN_OR_RETURN(o.ssm_norm, sh.upload(d.ssm_norm, false));
        } else {
            const GatedAttentionWeights& a = src.attn;
            STRATA_ASSIGN_OR_RETURN(L.attn_norm, sh.upload(a.norm, false));
            STRATA_ASSIGN_OR_RETURN(L.attn.wq, sh.upload(a.wq, true));
            STRATA_ASSIGN_OR_RETURN(L.attn.wk, sh.upload(a.wk, true));
            STRATA_ASSIGN_OR_RETURN(L.attn.wv, sh.upload(a.wv, true));
            STRATA_ASSIGN_OR_RETURN(L.attn.wo, sh.upload(a.wo, true));
            STRATA_ASSIGN_OR_RETURN(L.attn.q_norm, sh.upload(a.q_norm, false));
            STRATA_ASSIGN_OR_RETURN(L.attn.k_norm, sh.upload(a.k_norm, false));
        }
        STRATA_ASSIGN_OR_RETURN(L.post_norm, sh.upload(src.moe.norm, false));
        STRATA_ASSIGN_OR_RETURN(L.shared.gate, sh.upload(src.shared.gate, true));
        STRATA_ASSIGN_OR_RETURN(L.shared.up, sh.upload(src.shared.up, true));
        STRATA_ASSIGN_OR_RETURN(L.shared.down, sh.upload(src.shared.down, true));
        STRATA_ASSIGN_OR_RETURN(L.shared_gate_inp, sh.upload(src.shared.gate_inp, true));
        return upload_experts(src.moe, {}, share_index, L.experts);
    }

    // Layer il as the share (or rank) being queued holds it.
    const GpuHybridLayer& layer(uint32_t il) const { return layers_[rank()][il]; }

    const float* input_norm(uint32_t il) const override { return layer(il).attn_norm.f32(); }
    const float* ffn_norm_of(uint32_t il) const override { return layer(il).post_norm.f32(); }

    // The sequence's state on the device (checked: a state made by this model).
    static GpuRecurrentStorage& device_state(const SeqRows& s) {
        auto* storage = s.state ? dynamic_cast<GpuRecurrentStorage*>(s.state->storage()) : nullptr;
        STRATA_CHECK(storage != nullptr, "GPU hybrid forward without a recurrent state this model made (make_recurrent_state)");
        return *storage;
    }

    void add_graph_addresses(std::vector<const void*>& a) const override {
        for (const SeqRows& s : seqs_) {
            for (const auto& l : device_state(s).layers) {  // (all on the first rank under a tensor split)
                if (l.conv) a.push_back(l.conv.data()), a.push_back(l.ssm.data());
            }
        }
    }

    void queue_layer(uint32_t il, float* x, float* h, int64_t n, const int32_t* positions, int64_t kv_layer,
                     const float* next_norm, CpuContext& cpu) override {
        const GpuHybridLayer& L = layer(il);
        float* proj = L.recurrent ? delta_net(L, il, h, n) : gated_attention(L, h, n, positions, kv_layer);
        op("add_rms_norm post_attention_norm", [&] {
            gpu::gpu_add_rms_norm(x, proj, L.post_norm.f32(), n, config_.n_embd, config_.rms_eps, h, cur_->ctx(), hq_);
        });
        shared_expert(L, x, h, n);
        moe_ffn(L.experts, il, x, h, n, next_norm, cpu);
    }

    float* queue_attention_part(uint32_t il, float* h, int64_t n, const int32_t* positions, int64_t kv_layer) override {
        const GpuHybridLayer& L = layer(il);
        if (!L.recurrent) return gated_attention(L, h, n, positions, kv_layer);
        return rank() == 0 ? delta_net(L, il, h, n) : empty_part(n);
    }
    float* queue_ffn_part(uint32_t il, float* h, int64_t n, CpuContext&) override {
        const GpuHybridLayer& L = layer(il);
        float* part = moe_ffn_part(L.experts, il, h, n);
        if (rank() == 0) shared_expert(L, part, h, n);
        return part;
    }

    // DeltaNet(h), h = attn_norm(x), as gated_delta_net_block without the residual, in kProj.
    float* delta_net(const GpuHybridLayer& L, uint32_t il, float* h, int64_t n) {
        const ModelConfig& c = config_;
        const GpuDeltaNetWeights& w = L.delta;
        gpu::GpuContext& g = cur_->ctx();
        const int64_t e = c.n_embd, n_k = c.ssm_n_group, n_v = c.ssm_dt_rank;
        const int64_t d_k = c.ssm_d_state, d_v = c.ssm_d_inner / n_v, value_dim = c.ssm_d_inner;
        const int64_t conv_ch = conv_channels();

        float* mixed = g.scratch_floats(kMixed, static_cast<uint64_t>(n * conv_ch));
        float* z = g.scratch_floats(kZ, static_cast<uint64_t>(n * value_dim));
        float* ba = g.scratch_floats(kBetaAlpha, static_cast<uint64_t>(n * 2 * n_v));
        op("matmul attn_qkv", [&] { gpu::gpu_matmul(w.wqkv, 0, h, n, mixed, g, hq_); });
        op("matmul attn_gate", [&] { gpu::gpu_matmul(w.wz, 0, h, n, z, g, hq_); });
        if (w.wba) {
            op("matmul ssm_ba", [&] { gpu::gpu_matmul(w.wba, 0, h, n, ba, g, hq_); });
        } else {
            op("matmul ssm_beta", [&] { gpu::gpu_matmul(w.wbeta, 0, h, n, ba, g, hq_); });
            op("matmul ssm_alpha", [&] { gpu::gpu_matmul(w.walpha, 0, h, n, ba + n * n_v, g, hq_); });
        }
        float* qkv = g.scratch_floats(kConvOut, static_cast<uint64_t>(n * conv_ch));
        for (const SeqRows& s : seqs_) {  // each sequence over its own conv history
            op("causal_conv1d_silu", [&] {
                gpu::gpu_causal_conv1d_silu(mixed + s.first * conv_ch, s.n, conv_ch, w.conv.f32(), c.ssm_conv_kernel,
                                            device_state(s).layers[il].conv.as<float>(), qkv + s.first * conv_ch, g);
            });
        }
        op("delta_net_qk_norm", [&] {
            gpu::gpu_delta_net_qk_norm(qkv, n, conv_ch, n_k, d_k, kL2NormEps, 1.0f / std::sqrt(static_cast<float>(d_k)), g);
        });
        float* gates = g.scratch_floats(kGates, static_cast<uint64_t>(n * 2 * n_v));
        op("delta_net_gates", [&] {
            if (w.wba) gpu::gpu_delta_net_gates_fused(ba, n, n_k, n_v, w.a.f32(), w.dt_bias.f32(), gates, g);
            else gpu::gpu_delta_net_gates_separate(ba, ba + n * n_v, n, n_v, w.a.f32(), w.dt_bias.f32(), gates, g);
        });
        float* core = g.scratch_floats(kCore, static_cast<uint64_t>(n * value_dim));
        const gpu::GpuDeltaNetShape shape{n_k, n_v, d_k, d_v, v_order_};
        for (const SeqRows& s : seqs_) {  // ... and its own delta-rule state
            op("gated_delta_rule", [&] {
                gpu::gpu_gated_delta_rule(qkv + s.first * conv_ch, s.n, conv_ch, gates + s.first * 2 * n_v, shape,
                                          device_state(s).layers[il].ssm.as<float>(), core + s.first * value_dim, g);
            });
        }
        op("gated_rms_norm", [&] { gpu::gpu_gated_rms_norm(core, z, w.ssm_norm.f32(), n * n_v, d_v, c.rms_eps, core, g); });
        float* proj = g.scratch_floats(gpu::kProj, static_cast<uint64_t>(n * e));
        gpu::GpuQ8Rows cq;
        const gpu::GpuQ8Rows* cq_used = quantized(core, n, value_dim, n, kQ8Core, cq);
        op("matmul ssm_out", [&] { gpu::gpu_matmul(w.wout, 0, core, n, proj, g, cq_used); });
        return proj;
    }

    // wo(attention(q, k, v) · sigmoid(gate)) of h = attn_norm(x), as gated_attention_block
    // without the residual (this rank's heads under a tensor split), in kProj.
    float* gated_attention(const GpuHybridLayer& L, float* h, int64_t n, const int32_t* positions, int64_t kv_layer) {
        const ModelConfig& c = config_;
        gpu::GpuContext& g = cur_->ctx();
        const int64_t e = c.n_embd, q_dim = heads() * c.head_dim_k, k_dim = heads_kv() * c.head_dim_k,
                      v_dim = heads_kv() * c.head_dim_v;
        float* qg = g.scratch_floats(kQGate, static_cast<uint64_t>(n * 2 * q_dim));
        float* k = g.scratch_floats(gpu::kK, static_cast<uint64_t>(n * k_dim));
        float* v = g.scratch_floats(gpu::kV, static_cast<uint64_t>(n * v_dim));
        const gpu::GpuMatvecOut qkv[] = {{&L.attn.wq, qg}, {&L.attn.wk, k}, {&L.attn.wv, v}};
        bool fused = false;
        if (hq_) op("matmul attn_qkv", [&] { fused = gpu::gpu_matvec_q8_many(qkv, 3, *hq_, n, g); });
        if (!fused) {
            op("matmul attn_q", [&] { gpu::gpu_matmul(L.attn.wq, 0, h, n, qg, g, hq_); });
            op("matmul attn_k", [&] { gpu::gpu_matmul(L.attn.wk, 0, h, n, k, g, hq_); });
            op("matmul attn_v", [&] { gpu::gpu_matmul(L.attn.wv, 0, h, n, v, g, hq_); });
        }
        float* q = g.scratch_floats(gpu::kQ, static_cast<uint64_t>(n * q_dim));
        float* gate = g.scratch_floats(kAttnGate, static_cast<uint64_t>(n * q_dim));
        op("split_q_gate", [&] { gpu::gpu_split_q_gate(qg, n, heads(), c.head_dim_k, q, gate, g); });
        float* proj = g.scratch_floats(gpu::kProj, static_cast<uint64_t>(n * e));
        attend_and_project(L.attn, q, k, v, n, positions, kv_layer, rope_params(c.rope_dims), gate, proj);
        return proj;
    }

    // x += sigmoid(gate_inp · h) · down(silu(gate h) · up h), h = post_norm(x), which it leaves
    // as it is for the routed experts (qwen3next.cpp's shared_expert reads the same h). x: the
    // residual, or a tensor split's FFN part.
    void shared_expert(const GpuHybridLayer& L, float* x, const float* h, int64_t n) {
        gpu::GpuContext& g = cur_->ctx();
        const int64_t e = config_.n_embd;
        float* out = swiglu_ffn(L.shared, h, n, FfnRole::SharedExperts);
        float* logit = g.scratch_floats(kSharedLogit, static_cast<uint64_t>(n));
        op("matmul ffn_gate_inp_shexp", [&] { gpu::gpu_matmul(L.shared_gate_inp, 0, h, n, logit, g, hq_); });
        op("add_sigmoid_scaled shexp", [&] { gpu::gpu_add_sigmoid_scaled(x, out, logit, n, e, g); });
    }

    // HF's l2norm eps (the FLA kernels' constant), as gated_delta_net_block.cpp.
    static constexpr float kL2NormEps = 1e-6f;

    std::vector<std::vector<GpuHybridLayer>> layers_;  // [rank][layer]: one rank without a tensor split
    std::deque<std::vector<uint8_t>> column_copies_;   // column slices, kept until uploaded
    gpu::GpuVHeadOrder v_order_ = gpu::GpuVHeadOrder::Grouped;
    RecurrentState own_state_;               // the state plain forward() uses
    const KvCache* own_state_kv_ = nullptr;  // the cache of the sequence own_state_ belongs to
};

}  // namespace

Result<std::unique_ptr<Model>> load_gpu_hybrid(const GgufFile& file, const ModelConfig& config,
                                               const ComputeOptions& options) {
    return gpu::load_gpu_pass<GpuHybrid>(file, config, options);
}

}  // namespace strata
