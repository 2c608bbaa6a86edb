#include "backend/cpu/rope_table.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/check.h"

namespace strata {

RopeTable rope_table_default(RopeStyle style, int64_t rope_dims, float base) {
    RopeTable t;
    t.style = style;
    t.rope_dims = rope_dims;
    t.inv_freq.resize(static_cast<size_t>(rope_dims / 2));
    for (int64_t i = 0; i < rope_dims / 2; ++i) {
        t.inv_freq[static_cast<size_t>(i)] =
            std::pow(static_cast<double>(base), -2.0 * static_cast<double>(i) / static_cast<double>(rope_dims));
    }
    return t;
}

float yarn_mscale(float factor, float mscale) {
    if (factor <= 1.0f) return 1.0f;
    return static_cast<float>(0.1 * mscale * std::log(static_cast<double>(factor)) + 1.0);
}

RopeTable rope_table_yarn(RopeStyle style, int64_t rope_dims, float base, const YarnParams& y) {
    RopeTable t = rope_table_default(style, rope_dims, base);
    t.attn_factor = y.attn_factor;
    if (y.factor <= 1.0f) return t;
    STRATA_CHECK(y.original_ctx > 0, "YaRN needs the original context length");
    // The dimension d at which a pair turns `rotations` times over the original context:
    // d = dims * ln(ctx / (rotations * 2π)) / (2 ln base).
    const double dims = static_cast<double>(rope_dims), ln_base = std::log(static_cast<double>(base));
    auto correction_dim = [&](double rotations) {
        return dims * std::log(static_cast<double>(y.original_ctx) / (rotations * 2.0 * std::numbers::pi)) / (2.0 * ln_base);
    };
    double low = correction_dim(y.beta_fast), high = correction_dim(y.beta_slow);
    if (y.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, dims - 1.0);
    if (low == high) high += 0.001;  // as HF: avoid dividing by zero
    for (int64_t i = 0; i < rope_dims / 2; ++i) {
        // ramp 0 below `low` (high-frequency pairs keep their frequency), 1 above `high`
        // (low-frequency pairs are interpolated: divided by the factor), linear in between.
        const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
        const double extrapolated = t.inv_freq[static_cast<size_t>(i)];
        t.inv_freq[static_cast<size_t>(i)] = extrapolated / y.factor * ramp + extrapolated * (1.0 - ramp);
    }
    return t;
}

void cpu_rope_table(float* x, int64_t n_tokens, int64_t n_head, int64_t head_stride, const RopeTable& t,
                    const int32_t* positions) {
    STRATA_CHECK(t.rope_dims <= head_stride && t.rope_dims % 2 == 0, "rope table wider than the head");
    const int64_t half = t.rope_dims / 2;
    for (int64_t tok = 0; tok < n_tokens; ++tok) {
        const double pos = positions[tok];
        for (int64_t i = 0; i < half; ++i) {
            const double theta = pos * t.inv_freq[static_cast<size_t>(i)];
            const float c = static_cast<float>(std::cos(theta)) * t.attn_factor;
            const float s = static_cast<float>(std::sin(theta)) * t.attn_factor;
            // Normal pairs neighbours (2i, 2i+1); Neox pairs the two halves (i, i + d/2).
            const int64_t a = t.style == RopeStyle::Normal ? 2 * i : i;
            const int64_t b = t.style == RopeStyle::Normal ? 2 * i + 1 : i + half;
            for (int64_t h = 0; h < n_head; ++h) {
                float* head = x + (tok * n_head + h) * head_stride;
                const float x0 = head[a], x1 = head[b];
                head[a] = x0 * c - x1 * s;
                head[b] = x0 * s + x1 * c;
            }
        }
    }
}

}  // namespace strata
