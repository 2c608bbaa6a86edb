#include "backend/cpu/ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "backend/cpu/cpu_op_profile.h"
#include "backend/cpu/swiglu_kernels.h"
#include "quant/cpu/cpu_features.h"

namespace strata {

namespace {

// Values below which a row op stays on the calling thread: ~32 rows of 2048, some tens of µs of
// work, about what waking the pool and waiting for it costs.
constexpr int64_t kParallelRowValues = 64 * 1024;

void rms_norm_rows(const float* x, const float* weight, int64_t r0, int64_t r1, int64_t n, float eps, float* out) {
    for (int64_t r = r0; r < r1; ++r) {
        const float* xr = x + r * n;
        float* o = out + r * n;
        double sum = 0.0;  // double: the mean of squares of thousands of values loses bits in float
        for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(xr[i]) * xr[i];
        const float scale = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(n) + eps));
        if (weight) {
            for (int64_t i = 0; i < n; ++i) o[i] = xr[i] * scale * weight[i];
        } else {
            for (int64_t i = 0; i < n; ++i) o[i] = xr[i] * scale;
        }
    }
}

}  // namespace

void cpu_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out) {
    CpuOpScope profile_scope("rms_norm");
    rms_norm_rows(x, weight, 0, n_rows, n, eps, out);
}

void cpu_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out, CpuContext& ctx) {
    CpuOpScope profile_scope("rms_norm");
    if (n_rows * n < kParallelRowValues || ctx.pool().size() == 1) return rms_norm_rows(x, weight, 0, n_rows, n, eps, out);
    ctx.pool().parallel_for(n_rows, [&](int64_t r0, int64_t r1, int) { rms_norm_rows(x, weight, r0, r1, n, eps, out); });
}

void cpu_grouped_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n_groups, int64_t n, float eps,
                          float* out, CpuContext& ctx) {
    CpuOpScope profile_scope("rms_norm");
    // Row r, group g is norm row r·n_groups + g with the weight's g-th part: the plain norm's
    // arithmetic, group by group.
    const auto rows = [&](int64_t r0, int64_t r1, int) {
        for (int64_t r = r0; r < r1; ++r) {
            for (int64_t g = 0; g < n_groups; ++g) {
                const int64_t at = (r * n_groups + g) * n;
                rms_norm_rows(x + at, weight + g * n, 0, 1, n, eps, out + at);
            }
        }
    };
    if (n_rows * n_groups * n < kParallelRowValues || ctx.pool().size() == 1) return rows(0, n_rows, 0);
    ctx.pool().parallel_for(n_rows, rows);
}

namespace {

// Rotates the first rope_dims of each of n_head heads of one token's row by the angles whose
// cosines and sines are c and s.
void rotate_heads(float* x, int64_t n_head, const RopeParams& p, const float* c, const float* s) {
    const int64_t half = p.rope_dims / 2;
    for (int64_t h = 0; h < n_head; ++h) {
        float* head = x + h * p.head_dim;
        for (int64_t i = 0; i < half; ++i) {
            // Normal pairs neighbours (2i, 2i+1); Neox pairs the two halves (i, i + d/2).
            const int64_t a = p.style == RopeStyle::Normal ? 2 * i : i;
            const int64_t b = p.style == RopeStyle::Normal ? 2 * i + 1 : i + half;
            const float x0 = head[a], x1 = head[b];
            head[a] = x0 * c[i] - x1 * s[i];
            head[b] = x0 * s[i] + x1 * c[i];
        }
    }
}

// base^(-2i/d) for i < rope_dims / 2 (HF's inv_freq, in double), into this thread's buffer.
const double* inverse_frequencies(const RopeParams& p) {
    thread_local std::vector<double> inv_freq;
    const auto half = static_cast<size_t>(p.rope_dims / 2);
    inv_freq.resize(half);
    for (size_t i = 0; i < half; ++i)
        inv_freq[i] = std::pow(static_cast<double>(p.base), -2.0 * static_cast<double>(i) / static_cast<double>(p.rope_dims));
    return inv_freq.data();
}

// Tokens [t0, t1): per token, the angles' cosines and sines once for q and k.
void rope_tokens(float* q, int64_t n_head_q, float* k, int64_t n_head_k, int64_t t0, int64_t t1, const RopeParams& p,
                 const int32_t* positions, const double* inv_freq) {
    const auto half = static_cast<size_t>(p.rope_dims / 2);
    thread_local std::vector<float> cs;
    cs.resize(2 * half);
    for (int64_t t = t0; t < t1; ++t) {
        const double pos = positions[t];
        for (size_t i = 0; i < half; ++i) {
            const double theta = pos * inv_freq[i];  // computed in double, applied in float
            cs[i] = static_cast<float>(std::cos(theta));
            cs[half + i] = static_cast<float>(std::sin(theta));
        }
        rotate_heads(q + t * n_head_q * p.head_dim, n_head_q, p, cs.data(), cs.data() + half);
        if (k) rotate_heads(k + t * n_head_k * p.head_dim, n_head_k, p, cs.data(), cs.data() + half);
    }
}

}  // namespace

void cpu_rope(float* x, int64_t n_tokens, int64_t n_head, const RopeParams& p, const int32_t* positions) {
    cpu_rope_qk(x, n_head, nullptr, 0, n_tokens, p, positions);
}

void cpu_rope_qk(float* q, int64_t n_head_q, float* k, int64_t n_head_k, int64_t n_tokens, const RopeParams& p,
                 const int32_t* positions) {
    CpuOpScope profile_scope("rope");
    rope_tokens(q, n_head_q, k, n_head_k, 0, n_tokens, p, positions, inverse_frequencies(p));
}

void cpu_rope_qk(float* q, int64_t n_head_q, float* k, int64_t n_head_k, int64_t n_tokens, const RopeParams& p,
                 const int32_t* positions, CpuContext& ctx) {
    CpuOpScope profile_scope("rope");
    const double* inv_freq = inverse_frequencies(p);
    if (n_tokens * (n_head_q + n_head_k) * p.head_dim < kParallelRowValues || ctx.pool().size() == 1) {
        return rope_tokens(q, n_head_q, k, n_head_k, 0, n_tokens, p, positions, inv_freq);
    }
    ctx.pool().parallel_for(n_tokens, [&](int64_t t0, int64_t t1, int) {
        rope_tokens(q, n_head_q, k, n_head_k, t0, t1, p, positions, inv_freq);
    });
}

void cpu_swiglu(float* gate, const float* up, int64_t n) {
    CpuOpScope profile_scope("swiglu");
    static const bool avx2 = cpu_simd_level() >= SimdLevel::Avx2;
    if (avx2) {
        swiglu_avx2(gate, up, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        gate[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
}

void cpu_add(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void cpu_add_bias(float* x, const float* bias, int64_t n_rows, int64_t n) {
    for (int64_t r = 0; r < n_rows; ++r) {
        for (int64_t i = 0; i < n; ++i) x[r * n + i] += bias[i];
    }
}

void cpu_softmax(float* x, int64_t n) {
    float max = x[0];
    for (int64_t i = 1; i < n; ++i) max = std::max(max, x[i]);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - max);
        sum += x[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace strata
