// Qwen3-Next and Qwen3.5-MoE: hybrid stacks of gated DeltaNet (linear attention) layers with a
// gated full-attention layer every full_attention_interval-th layer, each followed by a
// softmax-routed MoE plus a shared expert whose output is scaled by a sigmoid gate.
//   qwen3next — Qwen3-Next-80B-A3B: fused b/a projection (ssm_ba), v heads in HF's grouped order
//   qwen35moe — Qwen3.5 MoE text model: separate ssm_beta / ssm_alpha, v heads reordered by the
//               converter to tiled order; interleaved M-RoPE, which is plain rope for text
// Recipe per layer: x += mixer(norm(x)); x += moe(norm(x)) + sigmoid(g·h) · shared(h); then
// norm → output head. HF's zero-centred norms (x · (1 + w)) arrive with the 1 already added by
// llama.cpp's converter, so every norm here is a plain RMS norm; only the DeltaNet's gated norm
// (ssm_norm) was never zero-centred.
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/arch/step_batch.h"
#include "model/blocks/gated_delta_net_block.h"
#include "model/model.h"
#include "model/weights.h"

namespace strata {

namespace {

struct SharedExpertWeights {
    Weight gate, up;   // ffn_gate_shexp, ffn_up_shexp [n_embd, n_ff_shared]
    Weight down;       // ffn_down_shexp [n_ff_shared, n_embd]
    Weight gate_inp;   // ffn_gate_inp_shexp [n_embd]: the shared expert's scalar gate
};

struct HybridLayer {
    bool recurrent = false;
    GatedDeltaNetWeights delta;   // recurrent layers
    GatedAttentionWeights attn;   // full-attention layers
    MoeFfnWeights moe;            // norm = post_attention_norm
    SharedExpertWeights shared;
};

// Scratch slots of the shared expert (after those of the mixer blocks).
constexpr int kSharedNormed = hybrid_slots::kV + 1, kSharedGate = kSharedNormed + 1, kSharedUp = kSharedNormed + 2;
constexpr int kSharedOut = kSharedNormed + 3, kSharedScale = kSharedNormed + 4;

// x += sigmoid(h · gate_inp) · down(silu(gate h) · up h), h = norm(x). Run before the routed
// experts so both read the same x (HF adds both to the residual of the same layer input).
void shared_expert(const SharedExpertWeights& w, const Weight& norm, const ModelConfig& cfg, const float* x, float* acc,
                   int64_t n, CpuContext& ctx) {
    const int64_t e = cfg.n_embd, ff = w.gate.ne[1];
    float* h = ctx.scratch_floats(kSharedNormed, static_cast<size_t>(n * e));
    cpu_rms_norm(x, norm.f32(), n, e, cfg.rms_eps, h);
    float* gate = ctx.scratch_floats(kSharedGate, static_cast<size_t>(n * ff));
    float* up = ctx.scratch_floats(kSharedUp, static_cast<size_t>(n * ff));
    float* scale = ctx.scratch_floats(kSharedScale, static_cast<size_t>(n));
    cpu_matmul(w.gate, 0, h, n, gate, ctx);
    cpu_matmul(w.up, 0, h, n, up, ctx);
    cpu_matmul(w.gate_inp, 0, h, n, scale, ctx);
    cpu_swiglu(gate, up, n * ff);
    float* out = ctx.scratch_floats(kSharedOut, static_cast<size_t>(n * e));
    cpu_matmul(w.down, 0, gate, n, out, ctx);
    for (int64_t t = 0; t < n; ++t) {
        const float s = 1.0f / (1.0f + std::exp(-scale[t]));
        for (int64_t d = 0; d < e; ++d) acc[t * e + d] = s * out[t * e + d];
    }
}

class Qwen3Next final : public Model {
public:
    explicit Qwen3Next(const ModelConfig& config) { config_ = config; }

    Status load(const GgufFile& file) {
        const ModelConfig& c = config_;
        const int64_t e = c.n_embd, v = c.n_vocab;
        if (!c.is_moe()) return Status::error("{}: {} expects expert_count > 0", file.path(), c.arch);
        if (c.head_dim_v != c.head_dim_k) {
            return Status::error("{}: {}: expected value_length == key_length (the output gate spans both), got {} and {}",
                                 file.path(), c.arch, c.head_dim_v, c.head_dim_k);
        }
        const int64_t n_v = c.ssm_dt_rank, d_k = c.ssm_d_state;
        const int64_t key_dim = c.ssm_n_group * d_k, value_dim = c.ssm_d_inner, d_v = value_dim / n_v;
        const int64_t conv_ch = 2 * key_dim + value_dim;
        const int64_t ff = c.n_ff_expert, n_exp = c.n_expert, ff_sh = c.n_ff_shared_expert;

        WeightLoader w(file);
        token_embd_ = w.require("token_embd.weight", {e, v});
        output_norm_ = w.require_f32("output_norm.weight", {e});
        output_ = w.optional("output.weight", {e, v});
        if (!output_) output_ = token_embd_;  // tied embeddings
        layers_.resize(c.n_layer);
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const std::string b = "blk." + std::to_string(il) + ".";
            HybridLayer& L = layers_[il];
            L.recurrent = c.is_recurrent_layer(il);
            const Weight attn_norm = w.require_f32(b + "attn_norm.weight", {e});
            if (L.recurrent) {
                GatedDeltaNetWeights& d = L.delta;
                d.norm = attn_norm;
                d.wqkv = w.require(b + "attn_qkv.weight", {e, conv_ch});
                d.wz = w.require(b + "attn_gate.weight", {e, value_dim});
                if (c.arch == "qwen3next") {
                    d.wba = w.require(b + "ssm_ba.weight", {e, 2 * n_v});
                    d.v_order = VHeadOrder::Grouped;
                } else {
                    d.wbeta = w.require(b + "ssm_beta.weight", {e, n_v});
                    d.walpha = w.require(b + "ssm_alpha.weight", {e, n_v});
                    d.v_order = VHeadOrder::Tiled;
                }
                d.conv = w.require_f32(b + "ssm_conv1d.weight", {c.ssm_conv_kernel, conv_ch});
                d.dt_bias = w.require_f32(b + "ssm_dt.bias", {n_v});
                d.a = w.require_f32(b + "ssm_a", {n_v});
                d.ssm_norm = w.require_f32(b + "ssm_norm.weight", {d_v});
                d.wout = w.require(b + "ssm_out.weight", {value_dim, e});
            } else {
                GatedAttentionWeights& a = L.attn;
                a.norm = attn_norm;
                a.wq = w.require(b + "attn_q.weight", {e, 2 * c.q_dim()});
                a.wk = w.require(b + "attn_k.weight", {e, c.kv_dim_k()});
                a.wv = w.require(b + "attn_v.weight", {e, c.kv_dim_v()});
                a.q_norm = w.require_f32(b + "attn_q_norm.weight", {c.head_dim_k});
                a.k_norm = w.require_f32(b + "attn_k_norm.weight", {c.head_dim_k});
                a.wo = w.require(b + "attn_output.weight", {c.n_head * c.head_dim_v, e});
            }
            L.moe.norm = w.require_f32(b + "post_attention_norm.weight", {e});
            L.moe.router = w.require(b + "ffn_gate_inp.weight", {e, n_exp});
            L.moe.gate_exps = w.require(b + "ffn_gate_exps.weight", {e, ff, n_exp});
            L.moe.up_exps = w.require(b + "ffn_up_exps.weight", {e, ff, n_exp});
            L.moe.down_exps = w.require(b + "ffn_down_exps.weight", {ff, e, n_exp});
            L.shared.gate = w.require(b + "ffn_gate_shexp.weight", {e, ff_sh});
            L.shared.up = w.require(b + "ffn_up_shexp.weight", {e, ff_sh});
            L.shared.down = w.require(b + "ffn_down_shexp.weight", {ff_sh, e});
            L.shared.gate_inp = w.require(b + "ffn_gate_inp_shexp.weight", {e});
        }
        STRATA_TRY(w.status());
        own_state_ = make_recurrent_state();
        return Status::ok();
    }

    RecurrentState make_recurrent_state() const override {
        const ModelConfig& c = config_;
        std::vector<bool> recurrent(c.n_layer);
        for (uint32_t il = 0; il < c.n_layer; ++il) recurrent[il] = c.is_recurrent_layer(il);
        const int64_t conv_ch = 2 * int64_t{c.ssm_n_group} * c.ssm_d_state + c.ssm_d_inner;
        const int64_t d_v = c.ssm_d_inner / c.ssm_dt_rank;
        return RecurrentState(recurrent, (c.ssm_conv_kernel - 1) * conv_ch,
                              int64_t{c.ssm_dt_rank} * c.ssm_d_state * d_v);
    }

    // One sequence at a time through the model's own state; a batch at position 0 starts over.
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) override {
        STRATA_CHECK(batch.pos0 == 0 || &kv == own_state_kv_,
                     "plain forward() of a hybrid model serves one sequence at a time: use forward_with_state()");
        own_state_kv_ = &kv;
        forward_with_state(batch, kv, own_state_, logits, which, ctx);
    }

    void forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits, LogitsFor which,
                            CpuContext& ctx) override {
        const SequenceStep step{batch.tokens, batch.n_tokens, batch.pos0, &kv, &state, logits, which};
        run(std::span(&step, 1), batch.expert_source, ctx);
    }
    void forward_multi(std::span<const SequenceStep> steps, CpuContext& ctx) override { run(steps, nullptr, ctx); }
    bool fuses_sequences() const override { return true; }

    // One sequence or several, the same code: a one-step batch is the single-sequence forward.
    void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) {
        const ModelConfig& c = config_;
        for (const SequenceStep& s : steps) {
            STRATA_CHECK(s.state != nullptr, "a hybrid model needs each sequence's recurrent state");
            if (s.pos0 == 0) s.state->clear();
            STRATA_CHECK(s.pos0 == s.state->n_past(),
                         "a recurrent state cannot be rewound: the batch must start where the last one ended");
        }
        const Batch& batch = gathered_.gather(steps, expert_source);
        const int64_t n = batch.n_tokens, e = c.n_embd;
        residual_.resize(static_cast<size_t>(n * e));
        shared_out_.resize(static_cast<size_t>(n * e));
        float* x = residual_.data();
        cpu_get_rows(token_embd_, batch.tokens, n, x);
        for (uint32_t il = 0; il < c.n_layer; ++il) {
            const HybridLayer& L = layers_[il];
            if (L.recurrent) gated_delta_net_block(L.delta, c, x, batch, il, ctx);
            else gated_attention_block(L.attn, c, x, batch, il, ctx);
            shared_expert(L.shared, L.moe.norm, c, x, shared_out_.data(), n, ctx);
            moe_ffn_block(L.moe, c, x, batch, ctx);
            cpu_add(x, shared_out_.data(), n * e);
        }
        for (const SequenceStep& s : steps) s.state->advance(s.n_tokens);
        gathered_.write_logits(x, output_norm_, output_, c, hybrid_slots::kNormed, ctx);
    }

private:
    Weight token_embd_, output_norm_, output_;
    std::vector<HybridLayer> layers_;
    StepBatch gathered_;
    std::vector<float> residual_, shared_out_;
    RecurrentState own_state_;              // the state plain forward() uses
    const KvCache* own_state_kv_ = nullptr;  // the cache of the sequence own_state_ belongs to
};

}  // namespace

Result<std::unique_ptr<Model>> load_qwen3next(const GgufFile& file, const ModelConfig& config) {
    auto model = std::make_unique<Qwen3Next>(config);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata
