#pragma once
// Element-wise and per-row CPU ops of the transformer blocks. All work on rows of floats;
// `n_rows` rows of `n` values, contiguous.
//
//   cpu_rms_norm(x, norm_weight, n_tokens, n_embd, eps, out);
//   cpu_rope(q, n_tokens, n_head, head_dim, rope, positions);

#include <cstdint>

#include "backend/rope_style.h"

namespace strata {

class CpuContext;

// out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight   (weight may be null: no scaling)
void cpu_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out);
// The same, with a prompt batch's rows split over ctx's threads (the same bits: each row is
// computed as above). A decode step's few rows stay on the calling thread, where waking the pool
// would cost more than the work. Call from the forward's thread, not from inside a pool task.
void cpu_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out, CpuContext& ctx);

// RMS norm per group: each row holds n_groups groups of n values, each normalized over its own n
// values, then multiplied by the row-wide weight (n_groups · n values). qwen4exp's hyper-connection
// and PLE norms, over the residual streams of a token.
void cpu_grouped_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n_groups, int64_t n, float eps,
                          float* out, CpuContext& ctx);

struct RopeParams {
    RopeStyle style = RopeStyle::Normal;
    int64_t head_dim = 0;   // stride between heads
    int64_t rope_dims = 0;  // leading dimensions of each head that rotate
    float base = 10000.0f;
};
// Rotates, in place, the first rope_dims of each of n_head heads of each token, by the token's
// position. x: n_tokens rows of n_head * head_dim.
void cpu_rope(float* x, int64_t n_tokens, int64_t n_head, const RopeParams& p, const int32_t* positions);
// The same rotation of q (n_head_q heads a row) and k (n_head_k heads a row; may be null) at the
// same positions, with each angle's cosine and sine computed once for both.
void cpu_rope_qk(float* q, int64_t n_head_q, float* k, int64_t n_head_k, int64_t n_tokens, const RopeParams& p,
                 const int32_t* positions);
// The same, with a prompt batch's tokens split over ctx's threads (the same bits).
void cpu_rope_qk(float* q, int64_t n_head_q, float* k, int64_t n_head_k, int64_t n_tokens, const RopeParams& p,
                 const int32_t* positions, CpuContext& ctx);

// gate[i] = silu(gate[i]) * up[i]
void cpu_swiglu(float* gate, const float* up, int64_t n);
// x[i] += y[i]
void cpu_add(float* x, const float* y, int64_t n);
// x[i] += bias[i % n_bias] over n values
void cpu_add_bias(float* x, const float* bias, int64_t n_rows, int64_t n);
// In-place softmax of n values.
void cpu_softmax(float* x, int64_t n);

}  // namespace strata
