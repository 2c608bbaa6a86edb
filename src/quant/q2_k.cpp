// Q2_K: 2-bit quants with a 4-bit scale and a 4-bit min per 16 values (quant/k_quants.h).
#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/k_quant_search.h"
#include "quant/k_quants.h"
#include "quant/q8_k.h"

namespace strata {

namespace {
int64_t super_blocks(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "Q2_K rows hold a multiple of 256 values");
    return n / 256;
}

// Quant `v` (0..255) of a block: 2-bit plane layout described in quant/k_quants.h.
int quant_at(const uint8_t* qs, int v) {
    const int half = v / 128, r = v % 128;
    return (qs[32 * half + r % 32] >> (2 * (r / 32))) & 3;
}
}  // namespace

void dequantize_row_q2_k(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ2_K*>(src);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        const float dmin = fp16_to_fp32(b[i].dmin);
        for (int sub = 0; sub < 16; ++sub) {
            const float dl = d * static_cast<float>(b[i].scales[sub] & 0xF);
            const float ml = dmin * static_cast<float>(b[i].scales[sub] >> 4);
            for (int l = 0; l < 16; ++l) {
                *dst++ = dl * static_cast<float>(quant_at(b[i].qs, 16 * sub + l)) - ml;
            }
        }
    }
}

void quantize_row_q2_k(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ2_K*>(dst);
    constexpr float kScaleMax = 15.f;  // 4-bit sub-block scales and mins
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i, src += 256) {
        uint8_t L[256];
        uint8_t scratch[16];
        float weights[16];
        float scales[16], mins[16];
        float max_scale = 0.0f, max_min = 0.0f;
        for (int sub = 0; sub < 16; ++sub) {
            const float* x = src + 16 * sub;
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[l]);
            scales[sub] = make_qkx2_quants(16, 3, x, weights, L + 16 * sub, &mins[sub], scratch, -0.5f, 0.1f, 15, true);
            max_scale = std::max(max_scale, scales[sub]);
            max_min = std::max(max_min, mins[sub]);
        }

        if (max_scale > 0.0f) {
            const float iscale = kScaleMax / max_scale;
            for (int sub = 0; sub < 16; ++sub) b[i].scales[sub] = static_cast<uint8_t>(nearest_int(iscale * scales[sub]));
            b[i].d = fp32_to_fp16(max_scale / kScaleMax);
        } else {
            std::fill(b[i].scales, b[i].scales + 16, uint8_t{0});
            b[i].d = fp32_to_fp16(0.0f);
        }
        if (max_min > 0.0f) {
            const float iscale = kScaleMax / max_min;
            for (int sub = 0; sub < 16; ++sub) {
                b[i].scales[sub] |= static_cast<uint8_t>(nearest_int(iscale * mins[sub]) << 4);
            }
            b[i].dmin = fp32_to_fp16(max_min / kScaleMax);
        } else {
            b[i].dmin = fp32_to_fp16(0.0f);
        }

        // Re-round every value against the scales as stored (fp16 d, 4-bit sub-scales). A
        // sub-block whose scale rounded to zero keeps the quants of the search.
        for (int sub = 0; sub < 16; ++sub) {
            const float d = fp16_to_fp32(b[i].d) * static_cast<float>(b[i].scales[sub] & 0xF);
            if (d == 0.0f) continue;
            const float dm = fp16_to_fp32(b[i].dmin) * static_cast<float>(b[i].scales[sub] >> 4);
            for (int l = 0; l < 16; ++l) {
                const int q = nearest_int((src[16 * sub + l] + dm) / d);
                L[16 * sub + l] = static_cast<uint8_t>(std::max(0, std::min(3, q)));
            }
        }

        for (int half = 0; half < 2; ++half) {
            const uint8_t* Lh = L + 128 * half;
            for (int l = 0; l < 32; ++l) {
                b[i].qs[32 * half + l] =
                    static_cast<uint8_t>(Lh[l] | (Lh[l + 32] << 2) | (Lh[l + 64] << 4) | (Lh[l + 96] << 6));
            }
        }
    }
}

float dot_q2_k_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ2_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        // Σ(d·s·q − dmin·m)·a = d·Σ s·(Σq·a) − dmin·Σ m·(Σa); Σa per 16 values is Q8_K's bsums.
        int min_sum = 0;
        for (int sub = 0; sub < 16; ++sub) min_sum += a[i].bsums[sub] * (w[i].scales[sub] >> 4);
        int scaled_sum = 0;
        for (int sub = 0; sub < 16; ++sub) {
            int s = 0;
            for (int l = 0; l < 16; ++l) s += a[i].qs[16 * sub + l] * quant_at(w[i].qs, 16 * sub + l);
            scaled_sum += (w[i].scales[sub] & 0xF) * s;
        }
        const float dall = a[i].d * fp16_to_fp32(w[i].d);
        const float dmin = a[i].d * fp16_to_fp32(w[i].dmin);
        sum += dall * static_cast<float>(scaled_sum) - dmin * static_cast<float>(min_sum);
    }
    return sum;
}

}  // namespace strata
