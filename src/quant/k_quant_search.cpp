// Ports of ggml's scale searches. Every accumulation keeps ggml's operand order, e.g. w·x·l is
// (w·x)·l, because the searches compare float scores and a different rounding can flip a choice.
#include "quant/k_quant_search.h"

#include <algorithm>
#include <cmath>

namespace strata {

namespace {

// Blocks whose largest magnitude is below this are stored as all zeros.
constexpr float kGroupMaxEps = 1e-15f;

int clamp_int(int v, int lo, int hi) { return std::max(lo, std::min(hi, v)); }

float signed_absmax(int n, const float* x, float* amax_out) {
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    *amax_out = amax;
    return max;
}

}  // namespace

float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* weights) {
    float amax;
    const float max = signed_absmax(n, x, &amax);
    if (amax < kGroupMaxEps) {
        std::fill(L, L + n, int8_t{0});
        return 0.0f;
    }
    auto weight = [&](int i) { return weights ? weights[i] : x[i] * x[i]; };

    float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = static_cast<int8_t>(l + nmax);
        const float w = weight(i);
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    // The least-squares scale for fixed quants is sumlx/suml2 and its error drop is sumlx²/suml2;
    // try the quants of nearby inverse scales and keep the set with the largest drop.
    for (int step = -9; step <= 9; ++step) {
        if (step == 0) continue;
        iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
        sumlx = suml2 = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
            const float w = weight(i);
            sumlx += w * x[i] * static_cast<float>(l);
            suml2 += w * static_cast<float>(l) * static_cast<float>(l);
        }
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                L[i] = static_cast<int8_t>(nmax + clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
    float amax;
    const float max = signed_absmax(n, x, &amax);
    if (amax < kGroupMaxEps) {
        std::fill(L, L + n, int8_t{0});
        return 0.0f;
    }
    const float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = static_cast<int8_t>(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    // Coordinate descent: re-round one quant against the scale fitted to all the others, keep the
    // move if the fit's error drop sumlx²/suml2 grows.
    for (int pass = 0; pass < 5; ++pass) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const float li = static_cast<float>(L[i]);
            float slx = sumlx - w * x[i] * li;
            if (slx > 0.0f) {
                float sl2 = suml2 - w * li * li;
                const int new_l = clamp_int(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != L[i]) {
                    slx += w * x[i] * static_cast<float>(new_l);
                    sl2 += w * static_cast<float>(new_l) * static_cast<float>(new_l);
                    if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<int8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++changed;
                    }
                }
            }
        }
        if (changed == 0) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* min_out,
                       uint8_t* scratch, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += weights[i];
        sum_x += weights[i] * x[i];
    }
    if (min > 0.0f) min = 0.0f;
    if (max == min) {
        std::fill(L, L + n, uint8_t{0});
        *min_out = -min;
        return 0.0f;
    }
    auto error_of = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };

    float iscale = static_cast<float>(nmax) / (max - min);
    float scale = 1 / iscale;
    float best_error = 0.0f;
    for (int i = 0; i < n; ++i) {
        L[i] = static_cast<uint8_t>(clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax));
        const float diff = scale * static_cast<float>(L[i]) + min - x[i];
        best_error += weights[i] * error_of(diff);
    }
    if (nstep < 1) {
        *min_out = -min;
        return scale;
    }
    for (int step = 0; step <= nstep; ++step) {
        iscale = (rmin + rdelta * static_cast<float>(step) + static_cast<float>(nmax)) / (max - min);
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax);
            scratch[i] = static_cast<uint8_t>(l);
            const float w = weights[i];
            const float lf = static_cast<float>(l);
            sum_l += w * lf;
            sum_l2 += w * lf * lf;
            sum_xl += w * lf * x[i];
        }
        // Weighted least squares for x ≈ scale·l + min over the candidate quants.
        const float det = sum_w * sum_l2 - sum_l * sum_l;
        if (det > 0.0f) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
            if (this_min > 0.0f) {
                this_min = 0.0f;
                this_scale = sum_xl / sum_l2;
            }
            float error = 0.0f;
            for (int i = 0; i < n; ++i) {
                const float diff = this_scale * static_cast<float>(scratch[i]) + this_min - x[i];
                error += weights[i] * error_of(diff);
            }
            if (error < best_error) {
                std::copy(scratch, scratch + n, L);
                best_error = error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *min_out = -min;
    return scale;
}

}  // namespace strata
