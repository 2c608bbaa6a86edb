// Hyper-connection mixers (hyper_connection.h), in HF's order of float operations.
#include "model/blocks/hyper_connection.h"

#include <cmath>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "model/blocks/gated_delta_net_block.h"

namespace strata {

namespace {
// Scratch beyond the hybrid blocks' slots (gated_delta_net_block.h).
constexpr int kHcNormed = hybrid_slots::kV + 2, kHcLow = kHcNormed + 1, kHcMix = kHcNormed + 2;

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }
}  // namespace

void hyper_connection_mix(const HyperConnectionWeights& w, const ModelConfig& cfg, const float* R, int64_t n_tokens,
                          float* x, float* a, CpuContext& ctx) {
    const int64_t hc = cfg.hc_count, e = cfg.n_embd, wide = hc * e, r = cfg.hc_lowrank;
    float* normed = ctx.scratch_floats(kHcNormed, static_cast<size_t>(n_tokens * wide));
    cpu_grouped_rms_norm(R, w.norm.f32(), n_tokens, hc, e, cfg.rms_eps, normed, ctx);

    float* low = ctx.scratch_floats(kHcLow, static_cast<size_t>(n_tokens * r));
    cpu_matmul(w.down, 0, normed, n_tokens, low, ctx);
    for (int64_t i = 0; i < n_tokens * r; ++i) {
        const float v = low[i] / static_cast<float>(hc);
        low[i] = v * sigmoid(v);  // silu
    }
    float* mix = ctx.scratch_floats(kHcMix, static_cast<size_t>(n_tokens * wide));
    cpu_matmul(w.up, 0, low, n_tokens, mix, ctx);
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* m = mix + t * wide;
        const float* nr = normed + t * wide;
        float* xt = x + t * e;
        for (int64_t i = 0; i < e; ++i) {
            float sum = 0.0f;
            for (int64_t s = 0; s < hc; ++s) sum += sigmoid(m[s * e + i]) * nr[s * e + i];
            xt[i] = sum / static_cast<float>(hc);  // the mean over the streams
        }
    }
    if (!w.inject) return;
    cpu_matmul(w.inject, 0, normed, n_tokens, a, ctx);
    for (int64_t i = 0; i < n_tokens * hc; ++i) a[i] = 2.0f * sigmoid(a[i] / static_cast<float>(hc));
}

void hyper_connection_combine(const float* y, const float* a, int64_t n_tokens, const ModelConfig& cfg, float* R) {
    const int64_t hc = cfg.hc_count, e = cfg.n_embd;
    for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t s = 0; s < hc; ++s) {
            const float as = a[t * hc + s];
            float* row = R + (t * hc + s) * e;
            for (int64_t i = 0; i < e; ++i) row[i] += as * y[t * e + i];
        }
    }
}

}  // namespace strata
