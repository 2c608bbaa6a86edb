// Manifold hyper-connections (manifold_hyper_connection.h), in HF's order of float operations
// (TD DeepseekV4HyperConnection, DeepseekV4HyperHead; everything in f32 there too).
#include "model/blocks/manifold_hyper_connection.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"

namespace strata {

namespace {
// Scratch above every other block's slots (blocks.h, the hybrid, MLA and qwen4exp blocks).
constexpr int kMhcNormed = CpuContext::kFirstFreeSlot + 60, kMhcMixes = kMhcNormed + 1;

// The streams a token may have (deepseek4's keys reader allows up to this many).
constexpr int64_t kMaxStreams = 64;

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// f: every token's hc·n_embd values divided by their RMS (no weight), then the fn mixes.
float* mixes_of(const Weight& fn, const ModelConfig& cfg, const float* X, int64_t n, CpuContext& ctx) {
    const int64_t wide = int64_t{cfg.hc_count} * cfg.n_embd, m = fn.ne[1];
    float* f = ctx.scratch_floats(kMhcNormed, static_cast<size_t>(n * wide));
    cpu_rms_norm(X, nullptr, n, wide, cfg.rms_eps, f, ctx);
    float* mixes = ctx.scratch_floats(kMhcMixes, static_cast<size_t>(n * m));
    cpu_matmul(fn, 0, f, n, mixes, ctx);
    return mixes;
}

// x = Σ_s pre_s X_s (HF sums the weighted streams in stream order).
void collapse(const float* pre, const float* Xt, int64_t hc, int64_t e, float* xt) {
    for (int64_t i = 0; i < e; ++i) {
        float sum = 0.0f;
        for (int64_t s = 0; s < hc; ++s) sum += pre[s] * Xt[s * e + i];
        xt[i] = sum;
    }
}
}  // namespace

void mhc_sinkhorn(float* c, int64_t hc, uint32_t iters, float eps) {
    const auto normalize_rows = [&] {
        for (int64_t j = 0; j < hc; ++j) {
            float sum = 0.0f;
            for (int64_t k = 0; k < hc; ++k) sum += c[j * hc + k];
            for (int64_t k = 0; k < hc; ++k) c[j * hc + k] /= sum + eps;
        }
    };
    const auto normalize_columns = [&] {
        for (int64_t k = 0; k < hc; ++k) {
            float sum = 0.0f;
            for (int64_t j = 0; j < hc; ++j) sum += c[j * hc + k];
            for (int64_t j = 0; j < hc; ++j) c[j * hc + k] /= sum + eps;
        }
    };
    for (int64_t j = 0; j < hc; ++j) {
        float* row = c + j * hc;
        cpu_softmax(row, hc);
        for (int64_t k = 0; k < hc; ++k) row[k] += eps;
    }
    normalize_columns();
    for (uint32_t it = 1; it < iters; ++it) {
        normalize_rows();
        normalize_columns();
    }
}

void mhc_pre(const MhcWeights& w, const ModelConfig& cfg, const float* X, int64_t n, float* x, float* post, float* comb,
             CpuContext& ctx) {
    const int64_t hc = cfg.hc_count, e = cfg.n_embd, m = (2 + hc) * hc;
    STRATA_CHECK(w.fn.ne[1] == m, "mHC mixes: expected (2 + hc)·hc outputs");
    const float* mixes = mixes_of(w.fn, cfg, X, n, ctx);
    const float* base = w.base.f32();
    const float* scale = w.scale.f32();
    const float eps = cfg.dsv4.hc_eps;
    STRATA_CHECK(hc <= kMaxStreams, "more hyper-connection streams than the mHC supports");
    float pre[kMaxStreams];
    for (int64_t t = 0; t < n; ++t) {
        const float* mt = mixes + t * m;
        for (int64_t s = 0; s < hc; ++s) {
            pre[s] = sigmoid(mt[s] * scale[0] + base[s]) + eps;
            post[t * hc + s] = 2.0f * sigmoid(mt[hc + s] * scale[1] + base[hc + s]);
        }
        float* ct = comb + t * hc * hc;
        for (int64_t i = 0; i < hc * hc; ++i) ct[i] = mt[2 * hc + i] * scale[2] + base[2 * hc + i];
        mhc_sinkhorn(ct, hc, cfg.dsv4.sinkhorn_iters, eps);
        collapse(pre, X + t * hc * e, hc, e, x + t * e);
    }
}

void mhc_post(const float* y, const float* post, const float* comb, int64_t n, const ModelConfig& cfg, float* X) {
    const int64_t hc = cfg.hc_count, e = cfg.n_embd;
    thread_local std::vector<float> mixed;  // per thread: a decode step allocates nothing
    mixed.resize(static_cast<size_t>(hc * e));
    for (int64_t t = 0; t < n; ++t) {
        float* Xt = X + t * hc * e;
        const float* ct = comb + t * hc * hc;
        const float* yt = y + t * e;
        for (int64_t k = 0; k < hc; ++k) {
            const float pk = post[t * hc + k];
            for (int64_t i = 0; i < e; ++i) {
                float sum = 0.0f;
                for (int64_t j = 0; j < hc; ++j) sum += ct[j * hc + k] * Xt[j * e + i];
                mixed[static_cast<size_t>(k * e + i)] = pk * yt[i] + sum;
            }
        }
        std::copy(mixed.begin(), mixed.end(), Xt);
    }
}

void mhc_head(const MhcHeadWeights& w, const ModelConfig& cfg, const float* X, int64_t n, float* out, CpuContext& ctx) {
    const int64_t hc = cfg.hc_count, e = cfg.n_embd;
    const float* mixes = mixes_of(w.fn, cfg, X, n, ctx);
    const float* base = w.base.f32();
    const float scale = w.scale.f32()[0];
    STRATA_CHECK(hc <= kMaxStreams, "more hyper-connection streams than the mHC supports");
    float pre[kMaxStreams];
    for (int64_t t = 0; t < n; ++t) {
        for (int64_t s = 0; s < hc; ++s) pre[s] = sigmoid(mixes[t * hc + s] * scale + base[s]) + cfg.dsv4.hc_eps;
        collapse(pre, X + t * hc * e, hc, e, out + t * e);
    }
}

}  // namespace strata
