// The hybrid stacks' shared GPU blocks (gpu_hybrid.h).
#include "model/gpu/gpu_hybrid.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace strata::gpu {

void GpuRecurrentStorage::clear() {
    for (Layer& l : layers) {
        if (!l.conv) continue;
        l.ctx->activate();
        memset_async(l.conv.data(), 0, l.conv.bytes(), l.ctx->stream());
        memset_async(l.ssm.data(), 0, l.ssm.bytes(), l.ctx->stream());
        l.ctx->synchronize();
    }
    if (ple_conv) {
        ple_ctx->activate();
        memset_async(ple_conv.data(), 0, ple_conv.bytes(), ple_ctx->stream());
        ple_ctx->synchronize();
    }
    std::fill(ple_tokens.begin(), ple_tokens.end(), ple_eos);
}

uint64_t GpuRecurrentStorage::bytes() const {
    uint64_t total = ple_conv.bytes() + ple_tokens.size() * sizeof(int32_t);
    for (const Layer& l : layers) total += l.conv.bytes() + l.ssm.bytes();
    return total;
}

void GpuRecurrentStorage::save(uint8_t* dst) const {
    for (const Layer& l : layers) {
        if (!l.conv) continue;
        l.ctx->activate();
        copy_d2h_async(dst, l.conv.data(), l.conv.bytes(), l.ctx->stream());
        copy_d2h_async(dst + l.conv.bytes(), l.ssm.data(), l.ssm.bytes(), l.ctx->stream());
        l.ctx->synchronize();  // the copies land in pageable memory: done only once the stream is
        dst += l.conv.bytes() + l.ssm.bytes();
    }
    if (ple_conv) {
        ple_ctx->activate();
        copy_d2h_async(dst, ple_conv.data(), ple_conv.bytes(), ple_ctx->stream());
        ple_ctx->synchronize();
        dst += ple_conv.bytes();
    }
    if (!ple_tokens.empty()) std::memcpy(dst, ple_tokens.data(), ple_tokens.size() * sizeof(int32_t));
}

void GpuRecurrentStorage::load(const uint8_t* src) {
    for (Layer& l : layers) {
        if (!l.conv) continue;
        l.ctx->activate();
        copy_h2d_async(l.conv.data(), src, l.conv.bytes(), l.ctx->stream());
        copy_h2d_async(l.ssm.data(), src + l.conv.bytes(), l.ssm.bytes(), l.ctx->stream());
        l.ctx->synchronize();  // `src` may be freed once load returns
        src += l.conv.bytes() + l.ssm.bytes();
    }
    if (ple_conv) {
        ple_ctx->activate();
        copy_h2d_async(ple_conv.data(), src, ple_conv.bytes(), ple_ctx->stream());
        ple_ctx->synchronize();
        src += ple_conv.bytes();
    }
    if (!ple_tokens.empty()) std::memcpy(ple_tokens.data(), src, ple_tokens.size() * sizeof(int32_t));
}

Status GpuHybridBlocks::check_delta_net_shape() const {
    const ModelConfig& c = config_;
    if (c.ssm_d_state > kGpuMaxDeltaNetHeadDim || c.ssm_d_inner / c.ssm_dt_rank > kGpuMaxDeltaNetHeadDim ||
        c.ssm_conv_kernel > kGpuMaxConvKernel) {
        return Status::error("{}: DeltaNet heads of {}/{} values or a convolution of {} taps are beyond the GPU "
                             "kernels (at most {} and {}); run with --device cpu",
                             c.arch_name(), c.ssm_d_state, c.ssm_d_inner / c.ssm_dt_rank, c.ssm_conv_kernel,
                             kGpuMaxDeltaNetHeadDim, kGpuMaxConvKernel);
    }
    return Status::ok();
}

std::unique_ptr<GpuRecurrentStorage> GpuHybridBlocks::make_device_state() const {
    const ModelConfig& c = config_;
    const uint64_t conv_floats = uint64_t(c.ssm_conv_kernel - 1) * conv_channels();
    const uint64_t ssm_floats = uint64_t(c.ssm_dt_rank) * c.ssm_d_state * (c.ssm_d_inner / c.ssm_dt_rank);
    auto storage = std::make_unique<GpuRecurrentStorage>();
    storage->layers.resize(c.n_layer);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        if (!c.is_recurrent_layer(il)) continue;
        GpuShard& sh = share(share_of(il));
        GpuRecurrentStorage::Layer& l = storage->layers[il];
        std::string error;
        l.ctx = &sh.ctx();
        l.conv = sh.pool().allocate(conv_floats * sizeof(float), &error);
        if (l.conv) l.ssm = sh.pool().allocate(ssm_floats * sizeof(float), &error);
        // The planner counts these states in VRAM; a plan that fits leaves room for them.
        STRATA_CHECK(l.conv && l.ssm, "the recurrent state of a sequence does not fit on the GPU");
    }
    storage->clear();
    return storage;
}

void GpuHybridBlocks::forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& cpu) {
    STRATA_CHECK(batch.pos0 == 0 || &kv == own_state_kv_,
                 "plain forward() of a hybrid model serves one sequence at a time: use forward_with_state()");
    own_state_kv_ = &kv;
    if (own_state_.empty()) own_state_ = make_recurrent_state();  // only callers of plain forward() pay for it
    forward_with_state(batch, kv, own_state_, logits, which, cpu);
}

void GpuHybridBlocks::forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits,
                                         LogitsFor which, CpuContext& cpu) {
    if (batch.pos0 == 0) state.clear();
    STRATA_CHECK(batch.pos0 == state.n_past(),
                 "a recurrent state cannot be rewound: the batch must start where the last one ended");
    forward_one(batch, kv, &state, logits, which, cpu);
    state.advance(batch.n_tokens);
}

GpuRecurrentStorage& GpuHybridBlocks::device_state(const SeqRows& s) {
    auto* storage = s.state ? dynamic_cast<GpuRecurrentStorage*>(s.state->storage()) : nullptr;
    STRATA_CHECK(storage != nullptr, "GPU hybrid forward without a recurrent state this model made (make_recurrent_state)");
    return *storage;
}

void GpuHybridBlocks::add_graph_addresses(std::vector<const void*>& a) const {
    for (const SeqRows& s : seqs_) {
        const GpuRecurrentStorage& st = device_state(s);
        for (const auto& l : st.layers) {  // (all on the first rank under a tensor split)
            if (l.conv) a.push_back(l.conv.data()), a.push_back(l.ssm.data());
        }
        if (st.ple_conv) a.push_back(st.ple_conv.data());
    }
}

Status GpuHybridBlocks::upload_delta_net(const GatedDeltaNetWeights& d, GpuShard& sh, GpuDeltaNetWeights& o) {
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
    o.output_gate = d.output_gate == NormGate::Sigmoid ? GpuNormGate::Sigmoid : GpuNormGate::Silu;
    if (d.v_order == VHeadOrder::Tiled) v_order_ = GpuVHeadOrder::Tiled;
    return Status::ok();
}

Status GpuHybridBlocks::upload_gated_attention(const GatedAttentionWeights& a, GpuShard& sh, GpuAttentionWeights& o) {
    STRATA_ASSIGN_OR_RETURN(o.wq, sh.upload(a.wq, true));
    STRATA_ASSIGN_OR_RETURN(o.wk, sh.upload(a.wk, true));
    STRATA_ASSIGN_OR_RETURN(o.wv, sh.upload(a.wv, true));
    STRATA_ASSIGN_OR_RETURN(o.wo, sh.upload(a.wo, true));
    STRATA_ASSIGN_OR_RETURN(o.q_norm, sh.upload(a.q_norm, false));
    STRATA_ASSIGN_OR_RETURN(o.k_norm, sh.upload(a.k_norm, false));
    return Status::ok();
}

Status GpuHybridBlocks::upload_shared_expert(const SharedExpertWeights& s, GpuShard& sh, GpuDenseFfnWeights& o,
                                             DeviceWeight& gate_inp) {
    STRATA_ASSIGN_OR_RETURN(o.gate, sh.upload(s.gate, true));
    STRATA_ASSIGN_OR_RETURN(o.up, sh.upload(s.up, true));
    STRATA_ASSIGN_OR_RETURN(o.down, sh.upload(s.down, true));
    STRATA_ASSIGN_OR_RETURN(gate_inp, sh.upload(s.gate_inp, true));
    return Status::ok();
}

float* GpuHybridBlocks::delta_net(const GpuDeltaNetWeights& w, uint32_t il, float* h, int64_t n) {
    const ModelConfig& c = config_;
    GpuContext& g = cur_->ctx();
    const int64_t e = c.n_embd, n_k = c.ssm_n_group, n_v = c.ssm_dt_rank;
    const int64_t d_k = c.ssm_d_state, d_v = c.ssm_d_inner / n_v, value_dim = c.ssm_d_inner;
    const int64_t conv_ch = conv_channels();

    float* mixed = g.scratch_floats(kMixed, static_cast<uint64_t>(n * conv_ch));
    float* z = g.scratch_floats(kZ, static_cast<uint64_t>(n * value_dim));
    float* ba = g.scratch_floats(kBetaAlpha, static_cast<uint64_t>(n * 2 * n_v));
    op("matmul attn_qkv", [&] { gpu_matmul(w.wqkv, 0, h, n, mixed, g, hq_); });
    op("matmul attn_gate", [&] { gpu_matmul(w.wz, 0, h, n, z, g, hq_); });
    if (w.wba) {
        op("matmul ssm_ba", [&] { gpu_matmul(w.wba, 0, h, n, ba, g, hq_); });
    } else {
        op("matmul ssm_beta", [&] { gpu_matmul(w.wbeta, 0, h, n, ba, g, hq_); });
        op("matmul ssm_alpha", [&] { gpu_matmul(w.walpha, 0, h, n, ba + n * n_v, g, hq_); });
    }
    float* qkv = g.scratch_floats(kConvOut, static_cast<uint64_t>(n * conv_ch));
    for (const SeqRows& s : seqs_) {  // each sequence over its own conv history
        op("causal_conv1d_silu", [&] {
            gpu_causal_conv1d_silu(mixed + s.first * conv_ch, s.n, conv_ch, w.conv.f32(), c.ssm_conv_kernel,
                                   device_state(s).layers[il].conv.as<float>(), qkv + s.first * conv_ch, g);
        });
    }
    op("delta_net_qk_norm", [&] {
        gpu_delta_net_qk_norm(qkv, n, conv_ch, n_k, d_k, kL2NormEps, 1.0f / std::sqrt(static_cast<float>(d_k)), g);
    });
    float* gates = g.scratch_floats(kGates, static_cast<uint64_t>(n * 2 * n_v));
    op("delta_net_gates", [&] {
        if (w.wba) gpu_delta_net_gates_fused(ba, n, n_k, n_v, w.a.f32(), w.dt_bias.f32(), gates, g);
        else gpu_delta_net_gates_separate(ba, ba + n * n_v, n, n_v, w.a.f32(), w.dt_bias.f32(), gates, g);
    });
    float* core = g.scratch_floats(kCore, static_cast<uint64_t>(n * value_dim));
    const GpuDeltaNetShape shape{n_k, n_v, d_k, d_v, v_order_};
    for (const SeqRows& s : seqs_) {  // ... and its own delta-rule state
        op("gated_delta_rule", [&] {
            gpu_gated_delta_rule(qkv + s.first * conv_ch, s.n, conv_ch, gates + s.first * 2 * n_v, shape,
                                 device_state(s).layers[il].ssm.as<float>(), core + s.first * value_dim, g);
        });
    }
    op("gated_rms_norm", [&] {
        gpu_gated_rms_norm(core, z, w.ssm_norm.f32(), n * n_v, d_v, c.rms_eps, core, g, w.output_gate);
    });
    float* proj = g.scratch_floats(kProj, static_cast<uint64_t>(n * e));
    GpuQ8Rows cq;
    const GpuQ8Rows* cq_used = quantized(core, n, value_dim, n, kQ8Core, cq);
    op("matmul ssm_out", [&] { gpu_matmul(w.wout, 0, core, n, proj, g, cq_used); });
    return proj;
}

float* GpuHybridBlocks::gated_attention(const GpuAttentionWeights& w, float* h, int64_t n, const int32_t* positions,
                                        int64_t kv_layer, const GpuKeySelection* selection) {
    const ModelConfig& c = config_;
    GpuContext& g = cur_->ctx();
    const int64_t e = c.n_embd, q_dim = heads() * c.head_dim_k, k_dim = heads_kv() * c.head_dim_k,
                  v_dim = heads_kv() * c.head_dim_v;
    float* qg = g.scratch_floats(kQGate, static_cast<uint64_t>(n * 2 * q_dim));
    float* k = g.scratch_floats(kK, static_cast<uint64_t>(n * k_dim));
    float* v = g.scratch_floats(kV, static_cast<uint64_t>(n * v_dim));
    const GpuMatvecOut qkv[] = {{&w.wq, qg}, {&w.wk, k}, {&w.wv, v}};
    bool fused = false;
    if (hq_) op("matmul attn_qkv", [&] { fused = gpu_matvec_q8_many(qkv, 3, *hq_, n, g); });
    if (!fused) {
        op("matmul attn_q", [&] { gpu_matmul(w.wq, 0, h, n, qg, g, hq_); });
        op("matmul attn_k", [&] { gpu_matmul(w.wk, 0, h, n, k, g, hq_); });
        op("matmul attn_v", [&] { gpu_matmul(w.wv, 0, h, n, v, g, hq_); });
    }
    float* q = g.scratch_floats(kQ, static_cast<uint64_t>(n * q_dim));
    float* gate = g.scratch_floats(kAttnGate, static_cast<uint64_t>(n * q_dim));
    op("split_q_gate", [&] { gpu_split_q_gate(qg, n, heads(), c.head_dim_k, q, gate, g); });
    float* proj = g.scratch_floats(kProj, static_cast<uint64_t>(n * e));
    attend_and_project(w, q, k, v, n, positions, kv_layer, rope_params(c.rope_dims), gate, proj, selection);
    return proj;
}

void GpuHybridBlocks::shared_expert(const GpuDenseFfnWeights& w, const DeviceWeight& gate_inp, float* x, const float* h,
                                    int64_t n) {
    GpuContext& g = cur_->ctx();
    const int64_t e = config_.n_embd;
    float* out = swiglu_ffn(w, h, n, FfnRole::SharedExperts);
    float* logit = g.scratch_floats(kSharedLogit, static_cast<uint64_t>(n));
    op("matmul ffn_gate_inp_shexp", [&] { gpu_matmul(gate_inp, 0, h, n, logit, g, hq_); });
    op("add_sigmoid_scaled shexp", [&] { gpu_add_sigmoid_scaled(x, out, logit, n, e, g); });
}

}  // namespace strata::gpu
