#include "backend/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace strata {

namespace {
// q·k in eight independent partial sums: one running sum is a chain of dependent adds that the
// compiler may not reorder, which made this loop ~4% of a decode step at a depth of only ~30.
float dot_lanes(const float* a, const float* b, int64_t n) {
    constexpr int kLanes = 8;
    float lane[kLanes] = {};
    int64_t d = 0;
    for (; d + kLanes <= n; d += kLanes) {
        for (int l = 0; l < kLanes; ++l) lane[l] += a[d + l] * b[d + l];
    }
    float s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    for (; d < n; ++d) s += a[d] * b[d];
    return s;
}
}  // namespace

void cpu_attention(const float* q, const KvCache& kv, int64_t layer, int64_t n_tokens, int64_t pos0,
                   const AttentionParams& p, float* out, CpuContext& ctx) {
    const int64_t group = p.n_head / p.n_head_kv;
    const int64_t n_kv_max = pos0 + n_tokens;
    const int64_t n_work = n_tokens * p.n_head;
    float* scores_all = ctx.scratch_floats(CpuContext::kAttentionScoresSlot,
                                           static_cast<size_t>(ctx.pool().size() * n_kv_max));
    ctx.pool().parallel_for(n_work, [&](int64_t w0, int64_t w1, int worker) {
        float* scores = scores_all + worker * n_kv_max;
        for (int64_t w = w0; w < w1; ++w) {
            const int64_t t = w / p.n_head, h = w % p.n_head, kvh = h / group;
            const int64_t n_kv = pos0 + t + 1;  // causal: this token sees positions <= its own
            const int64_t j0 = p.sliding_window > 0 ? std::max<int64_t>(0, n_kv - p.sliding_window) : 0;
            const float* qh = q + (t * p.n_head + h) * p.head_dim_k;
            // A sink takes part in the normalization as one more logit, so with it the kept
            // weights sum to less than one.
            const float sink = p.sinks ? p.sinks[h] : -INFINITY;
            float max = sink;
            for (int64_t j = j0; j < n_kv; ++j) {
                const float* k = kv.keys(layer, j) + kvh * p.head_dim_k;
                scores[j] = dot_lanes(qh, k, p.head_dim_k) * p.scale;
                max = std::max(max, scores[j]);
            }
            float sum = p.sinks ? std::exp(sink - max) : 0.0f;
            for (int64_t j = j0; j < n_kv; ++j) {
                scores[j] = std::exp(scores[j] - max);
                sum += scores[j];
            }
            const float inv = 1.0f / sum;
            float* o = out + (t * p.n_head + h) * p.head_dim_v;
            std::fill(o, o + p.head_dim_v, 0.0f);
            for (int64_t j = j0; j < n_kv; ++j) {
                const float* v = kv.values(layer, j) + kvh * p.head_dim_v;
                const float wj = scores[j] * inv;
                for (int64_t d = 0; d < p.head_dim_v; ++d) o[d] += wj * v[d];
            }
        }
    });
}

}  // namespace strata
