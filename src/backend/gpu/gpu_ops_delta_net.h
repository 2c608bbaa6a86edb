#pragma once
// The GPU ops of the Qwen3-Next / Qwen3.5-MoE hybrid layers (ops_delta_net.cu): the gated DeltaNet
// mixer (model/blocks/gated_delta_net_block.cpp), the two element-wise steps of the gated
// full-attention layer (gated_attention_block.cpp) and the shared expert's sigmoid gate
// (model/arch/qwen3next.cpp). The same operations as the CPU code, in the same float arithmetic,
// on device pointers, queued on the context's stream (no host synchronisation); the CPU
// references are backend/cpu/ssm_ops.h and those blocks, the parity tests
// tests/gpu/op_parity_delta_net_test.cpp. Plain C++, as gpu_ops.h.
//
// A DeltaNet layer, one sequence (qkv, z and ba projected by gpu_matmul):
//   gpu_causal_conv1d_silu(mixed, n, conv_ch, conv_w, kernel, conv_history, qkv, ctx);
//   gpu_delta_net_qk_norm(qkv, n, conv_ch, n_k, d_k, 1e-6f, 1 / sqrt(d_k), ctx);
//   gpu_delta_net_gates_fused(ba, n, n_k, n_v, a_neg, dt_bias, gates, ctx);
//   gpu_gated_delta_rule(qkv, n, conv_ch, gates, shape, ssm_state, core, ctx);
//   gpu_gated_rms_norm(core, z, ssm_norm, n * n_v, d_v, eps, core, ctx);

#include <cstdint>

#include "backend/gpu/device_runtime.h"

namespace strata::gpu {

// ---- gated DeltaNet ---------------------------------------------------------------------------
// Every op takes only values that stay the same from one decode step to the next (pointers,
// shapes, n_tokens = 1), so a captured decode step can replay them.

// The longest convolution gpu_causal_conv1d_silu takes (the models use 4).
constexpr int64_t kGpuMaxConvKernel = 8;

// cpu_causal_conv1d_silu: out[t][c] = silu(Σ_j weight[c][j] · [history ; x][t + j][c]), then
// `history` (kernel-1 rows of n_ch, oldest first) holds the last kernel-1 rows of [history ; x]
// (older rows shift up when n_tokens < kernel-1). weight: n_ch rows of `kernel` taps. x and out
// (n_tokens rows of n_ch) must not overlap.
void gpu_causal_conv1d_silu(const float* x, int64_t n_tokens, int64_t n_ch, const float* weight, int64_t kernel,
                            float* history, float* out, GpuContext& ctx);

// In place, per token row of qkv (rows of conv_ch): the first 2·n_k heads of d_k (all q heads,
// then all k heads) are L2-normalised as cpu_l2_norm (x / sqrt(Σx² + eps)); the n_k q heads are
// then multiplied by q_scale (1/sqrt(d_k)). The v part of the row is left alone.
void gpu_delta_net_qk_norm(float* qkv, int64_t n_tokens, int64_t conv_ch, int64_t n_k, int64_t d_k, float eps,
                           float q_scale, GpuContext& ctx);

// Per token t and v head h: gates[(t·n_v + h)·2] = beta = sigmoid(b), gates[(t·n_v + h)·2 + 1] =
// g = a_neg[h] · softplus(a + dt_bias[h]) (softplus with PyTorch's threshold 20). a_neg, dt_bias:
// [n_v] (ssm_a, ssm_dt.bias).
// qwen3next's fused ssm_ba: rows of 2·n_v, per q/k head its r = n_v/n_k b values then its r a values.
void gpu_delta_net_gates_fused(const float* ba, int64_t n_tokens, int64_t n_k, int64_t n_v, const float* a_neg,
                               const float* dt_bias, float* gates, GpuContext& ctx);
// qwen35moe's ssm_beta and ssm_alpha: b and a each n_tokens rows of n_v (the CPU block stacks
// them in one buffer: alpha = beta + n_tokens·n_v).
void gpu_delta_net_gates_separate(const float* beta, const float* alpha, int64_t n_tokens, int64_t n_v,
                                  const float* a_neg, const float* dt_bias, float* gates, GpuContext& ctx);

// How v heads read q/k heads when n_v > n_k (model/blocks/gated_delta_net_block.h's VHeadOrder).
enum class GpuVHeadOrder {
    Grouped,  // v head h reads q/k head h / (n_v / n_k)   (qwen3next)
    Tiled,    // v head h reads q/k head h % n_k            (qwen35moe)
};

struct GpuDeltaNetShape {
    int64_t n_k = 0, n_v = 0;  // q/k heads, v heads (n_v a multiple of n_k)
    int64_t d_k = 0, d_v = 0;  // head dimensions, each at most kGpuMaxDeltaNetHeadDim
    GpuVHeadOrder order = GpuVHeadOrder::Grouped;
};
constexpr int64_t kGpuMaxDeltaNetHeadDim = 256;

// The gated delta rule over the batch's tokens in order, one sequence: for each v head h (q/k
// head hk by shape.order) and token t, as cpu_gated_delta_step,
//   S_h ← exp(g)·S_h;  delta = beta·(v − S_hᵀk);  S_h ← S_h + k deltaᵀ;  out = S_hᵀq
// qkv: n_tokens rows of conv_ch as gpu_delta_net_qk_norm left them (q heads, k heads, v heads);
// gates: as gpu_delta_net_gates_* wrote them; state: n_v × d_k × d_v (RecurrentState::ssm's
// layout), read and written; out: n_tokens rows of n_v·d_v.
void gpu_gated_delta_rule(const float* qkv, int64_t n_tokens, int64_t conv_ch, const float* gates,
                          const GpuDeltaNetShape& shape, float* state, float* out, GpuContext& ctx);

// cpu_gated_rms_norm: per row of n, out = x / sqrt(mean(x²) + eps) · weight · gate(z), gate silu
// (Qwen3-Next, Qwen3.5) or sigmoid (qwen4exp's NormGate::Sigmoid). out may equal x.
enum class GpuNormGate { Silu, Sigmoid };
void gpu_gated_rms_norm(const float* x, const float* z, const float* weight, int64_t n_rows, int64_t n, float eps,
                        float* out, GpuContext& ctx, GpuNormGate gate = GpuNormGate::Silu);

// ---- gated full attention ---------------------------------------------------------------------
// The q projection's rows (n_tokens · n_head heads of 2·head_dim: head_dim query values, then
// head_dim gate values) into q and gate, n_tokens rows of n_head·head_dim each. Norms and rope
// then go through gpu_qk_norm_rope_store, attention through gpu_attention(_at).
void gpu_split_q_gate(const float* qg, int64_t n_tokens, int64_t n_head, int64_t head_dim, float* q, float* gate,
                      GpuContext& ctx);
// x *= sigmoid(gate), element-wise over n (the attention output by its gate).
void gpu_mul_sigmoid(float* x, const float* gate, int64_t n, GpuContext& ctx);

// ---- shared expert ----------------------------------------------------------------------------
// x[t] += sigmoid(logit[t]) · y[t] for n_rows rows of n: the shared expert's output y scaled by
// its scalar gate (logit = h · ffn_gate_inp_shexp) and added to the residual. The CPU adds it
// after the routed experts: x = (x + moe) + s·y; add it in that order for the same rounding.
void gpu_add_sigmoid_scaled(float* x, const float* y, const float* logit, int64_t n_rows, int64_t n, GpuContext& ctx);

}  // namespace strata::gpu
