// Gated DeltaNet (Qwen3-Next, Qwen3.5), after HF transformers' Qwen3NextGatedDeltaNet:
//   qkv = conv1d_silu(W_qkv h)            causal short convolution, state carried across calls
//   q, k = l2norm(q), l2norm(k);  q /= sqrt(d_k)
//   beta = sigmoid(b);  g = −exp(A_log) · softplus(a + dt_bias)
//   per v head: S ← e^g S;  S += k (beta (v − Sᵀk))ᵀ;  o = Sᵀq     (the gated delta rule)
//   x += W_out (rmsnorm(o) · w · silu(z))      (qwen4exp: sigmoid(z))
// The recurrence is stepped token by token inside a batch (no chunked prefill yet), so a batch
// and the same tokens one at a time compute the same sums. A batch of several sequences steps
// each sequence's own conv history and state over its own rows.
#include <cmath>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "backend/cpu/ssm_ops.h"
#include "core/check.h"
#include "model/blocks/gated_delta_net_block.h"

namespace strata {

namespace {
// HF's l2norm eps (the FLA kernels' constant), independent of the model's rms eps.
constexpr float kL2NormEps = 1e-6f;
}  // namespace

void gated_delta_net_block(const GatedDeltaNetWeights& w, const ModelConfig& cfg, float* x, const Batch& batch,
                           int64_t layer, CpuContext& ctx) {
    hybrid_residual_block(w.norm, cfg, x, batch.n_tokens, ctx,
                          [&](const float* h, float* out) { gated_delta_net(w, cfg, h, batch, layer, ctx, out); });
}

void gated_delta_net(const GatedDeltaNetWeights& w, const ModelConfig& cfg, const float* h, const Batch& batch,
                     int64_t layer, CpuContext& ctx, float* out) {
    using namespace hybrid_slots;
    const int64_t n = batch.n_tokens;
    const int64_t n_k = cfg.ssm_n_group, n_v = cfg.ssm_dt_rank, r = n_v / n_k;
    const int64_t d_k = cfg.ssm_d_state, d_v = cfg.ssm_d_inner / cfg.ssm_dt_rank;
    const int64_t key_dim = n_k * d_k, value_dim = n_v * d_v, conv_ch = 2 * key_dim + value_dim;
    STRATA_CHECK(!batch.sequences.empty(), "a DeltaNet batch needs its sequences (model/arch/step_batch.h)");
    for (const BatchSequence& s : batch.sequences) {
        STRATA_CHECK(s.state && s.state->has_layer(layer), "gated DeltaNet layer without a recurrent state");
    }

    float* mixed = ctx.scratch_floats(kMixed, static_cast<size_t>(n * conv_ch));
    float* z = ctx.scratch_floats(kZ, static_cast<size_t>(n * value_dim));
    float* ba = ctx.scratch_floats(kBetaAlpha, static_cast<size_t>(n * 2 * n_v));
    cpu_matmul(w.wqkv, 0, h, n, mixed, ctx);
    cpu_matmul(w.wz, 0, h, n, z, ctx);
    if (w.wba) {
        cpu_matmul(w.wba, 0, h, n, ba, ctx);
    } else {  // separate beta and alpha projections: n rows of n_v each, stacked
        cpu_matmul(w.wbeta, 0, h, n, ba, ctx);
        cpu_matmul(w.walpha, 0, h, n, ba + n * n_v, ctx);
    }

    // Causal conv over [history ; rows] with SiLU, each sequence over its own history; q and k
    // are then 2·n_k rows of d_k per token.
    float* qkv = ctx.scratch_floats(kConv, static_cast<size_t>(n * conv_ch));
    for (const BatchSequence& s : batch.sequences) {
        cpu_causal_conv1d_silu(mixed + s.first * conv_ch, s.n_tokens, conv_ch, w.conv.f32(), cfg.ssm_conv_kernel,
                               s.state->conv(layer), qkv + s.first * conv_ch);
    }
    const float q_scale = 1.0f / std::sqrt(static_cast<float>(d_k));
    for (int64_t t = 0; t < n; ++t) {
        float* row = qkv + t * conv_ch;
        cpu_l2_norm(row, 2 * n_k, d_k, kL2NormEps);
        for (int64_t i = 0; i < key_dim; ++i) row[i] *= q_scale;
    }

    // Per token and v head: beta (write strength) and g (log decay).
    float* gates = ctx.scratch_floats(kGates, static_cast<size_t>(n * 2 * n_v));
    const float* a_neg = w.a.f32();
    const float* dt_bias = w.dt_bias.f32();
    for (int64_t t = 0; t < n; ++t) {
        for (int64_t hv = 0; hv < n_v; ++hv) {
            float b_raw, a_raw;
            if (w.wba) {  // grouped per q/k head: [b × r, a × r] for each of the n_k heads
                const float* row = ba + t * 2 * n_v + (hv / r) * 2 * r;
                b_raw = row[hv % r];
                a_raw = row[r + hv % r];
            } else {
                b_raw = ba[t * n_v + hv];
                a_raw = ba[n * n_v + t * n_v + hv];
            }
            gates[(t * n_v + hv) * 2] = 1.0f / (1.0f + std::exp(-b_raw));
            gates[(t * n_v + hv) * 2 + 1] = a_neg[hv] * softplus(a_raw + dt_bias[hv]);
        }
    }

    // (Sequence, head) pairs are independent: each worker runs its pairs through the sequence's
    // rows in order, stepping that sequence's state.
    float* core = ctx.scratch_floats(kCore, static_cast<size_t>(n * value_dim));
    const int64_t n_seq = static_cast<int64_t>(batch.sequences.size());
    ctx.pool().parallel_for(n_seq * n_v, [&](int64_t i0, int64_t i1, int) {
        for (int64_t i = i0; i < i1; ++i) {
            const BatchSequence& seq = batch.sequences[static_cast<size_t>(i / n_v)];
            const int64_t hv = i % n_v;
            const int64_t hk = w.v_order == VHeadOrder::Grouped ? hv / r : hv % n_k;
            float* s = seq.state->ssm(layer) + hv * d_k * d_v;
            for (int64_t t = seq.first; t < seq.first + seq.n_tokens; ++t) {
                const float* row = qkv + t * conv_ch;
                const float* g_b = gates + (t * n_v + hv) * 2;
                cpu_gated_delta_step(s, row + hk * d_k, row + key_dim + hk * d_k, row + 2 * key_dim + hv * d_v, g_b[1],
                                     g_b[0], d_k, d_v, core + t * value_dim + hv * d_v);
            }
        }
    });

    cpu_gated_rms_norm(core, z, w.ssm_norm.f32(), n * n_v, d_v, cfg.rms_eps, core, w.output_gate);
    cpu_matmul(w.wout, 0, core, n, out, ctx);
}

}  // namespace strata
