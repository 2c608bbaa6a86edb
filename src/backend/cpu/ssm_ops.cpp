#include "backend/cpu/ssm_ops.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace strata {

namespace {
float silu(float x) { return x / (1.0f + std::exp(-x)); }
}  // namespace

float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

void cpu_causal_conv1d_silu(const float* x, int64_t n_tokens, int64_t n_ch, const float* weight, int64_t kernel,
                            float* history, float* out) {
    STRATA_CHECK(kernel >= 1 && n_ch > 0, "conv1d: kernel and channel count must be positive");
    STRATA_CHECK(x + n_tokens * n_ch <= out || out + n_tokens * n_ch <= x, "conv1d: x and out must not overlap");
    const int64_t n_hist = kernel - 1;
    // Input row for time index s of the window [history ; x]: s < n_hist is history.
    auto input_row = [&](int64_t s) { return s < n_hist ? history + s * n_ch : x + (s - n_hist) * n_ch; };
    for (int64_t t = 0; t < n_tokens; ++t) {
        float* o = out + t * n_ch;
        for (int64_t c = 0; c < n_ch; ++c) {
            const float* w = weight + c * kernel;
            float sum = 0.0f;
            // Token t sits at window index t + n_hist; tap j reads index t + j.
            for (int64_t j = 0; j < kernel; ++j) sum += w[j] * input_row(t + j)[c];
            o[c] = silu(sum);
        }
    }
    // The new history is the last n_hist rows of [history ; x].
    if (n_hist == 0) return;
    if (n_tokens >= n_hist) {
        std::copy_n(x + (n_tokens - n_hist) * n_ch, n_hist * n_ch, history);
    } else {
        std::copy(history + n_tokens * n_ch, history + n_hist * n_ch, history);  // shift older rows up
        std::copy_n(x, n_tokens * n_ch, history + (n_hist - n_tokens) * n_ch);
    }
}

void cpu_l2_norm(float* x, int64_t n_rows, int64_t n, float eps) {
    for (int64_t r = 0; r < n_rows; ++r) {
        float* xr = x + r * n;
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(xr[i]) * xr[i];
        const float inv = static_cast<float>(1.0 / std::sqrt(sum + eps));
        for (int64_t i = 0; i < n; ++i) xr[i] *= inv;
    }
}

void cpu_gated_delta_step(float* state, const float* q, const float* k, const float* v, float g, float beta,
                          int64_t d_k, int64_t d_v, float* out) {
    const float decay = std::exp(g);
    // Pass 1: decay the memory and read it at k (into out): out[j] = Σ_i S[i][j] · k[i].
    std::fill_n(out, d_v, 0.0f);
    for (int64_t i = 0; i < d_k; ++i) {
        float* s = state + i * d_v;
        const float ki = k[i];
        for (int64_t j = 0; j < d_v; ++j) {
            s[j] *= decay;
            out[j] += s[j] * ki;
        }
    }
    // delta = beta (v − Sᵀk), kept in out; pass 2 writes it into the memory: S += k deltaᵀ.
    for (int64_t j = 0; j < d_v; ++j) out[j] = (v[j] - out[j]) * beta;
    for (int64_t i = 0; i < d_k; ++i) {
        float* s = state + i * d_v;
        const float ki = k[i];
        for (int64_t j = 0; j < d_v; ++j) s[j] += ki * out[j];
    }
    // Pass 3: read the updated memory at q. (Three passes rather than a scratch row: S is
    // d_k × d_v floats, 64 KiB at 128 × 128, and stays in L2 between them.)
    std::fill_n(out, d_v, 0.0f);
    for (int64_t i = 0; i < d_k; ++i) {
        const float* s = state + i * d_v;
        const float qi = q[i];
        for (int64_t j = 0; j < d_v; ++j) out[j] += s[j] * qi;
    }
}

void cpu_gated_rms_norm(const float* x, const float* z, const float* weight, int64_t n_rows, int64_t n, float eps,
                        float* out, NormGate gate) {
    for (int64_t r = 0; r < n_rows; ++r) {
        const float* xr = x + r * n;
        const float* zr = z + r * n;
        float* o = out + r * n;
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(xr[i]) * xr[i];
        const float scale = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(n) + eps));
        if (gate == NormGate::Sigmoid) {
            for (int64_t i = 0; i < n; ++i) o[i] = xr[i] * scale * weight[i] * (1.0f / (1.0f + std::exp(-zr[i])));
        } else {
            for (int64_t i = 0; i < n; ++i) o[i] = xr[i] * scale * weight[i] * silu(zr[i]);
        }
    }
}

}  // namespace strata
