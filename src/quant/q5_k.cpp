// Q5_K: 5-bit quants (Q4_K's nibbles plus a high-bit plane) with a 6-bit scale and 6-bit min per
// 32 values (quant/k_quants.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/k_quant_search.h"
#include "quant/k_quants.h"
#include "quant/q8_k.h"

namespace strata {

namespace {
int64_t super_blocks(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "Q5_K rows hold a multiple of 256 values");
    return n / 256;
}

int quant_at(const BlockQ5_K& b, int v) {
    const uint8_t byte = b.qs[32 * (v / 64) + v % 32];
    const int low = (v % 64) < 32 ? byte & 0xF : byte >> 4;
    const int high = (b.qh[v % 32] >> (v / 32)) & 1;
    return low | (high << 4);
}
}  // namespace

void dequantize_row_q5_k(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ5_K*>(src);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        const float dmin = fp16_to_fp32(b[i].dmin);
        for (int sub = 0; sub < 8; ++sub) {
            uint8_t sc, m;
            get_scale_min_k4(sub, b[i].scales, &sc, &m);
            const float dl = d * static_cast<float>(sc);
            const float ml = dmin * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) *dst++ = dl * static_cast<float>(quant_at(b[i], 32 * sub + l)) - ml;
        }
    }
}

void quantize_row_q5_k(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ5_K*>(dst);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i, src += 256) {
        uint8_t L[256];
        uint8_t scratch[32];
        float weights[32];
        float scales[8], mins[8];
        float max_scale = 0.0f, max_min = 0.0f;
        for (int sub = 0; sub < 8; ++sub) {
            const float* x = src + 32 * sub;
            float sum_x2 = 0.0f;
            for (int l = 0; l < 32; ++l) sum_x2 += x[l] * x[l];
            const float av_x = std::sqrt(sum_x2 / 32);
            for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[l]);
            scales[sub] = make_qkx2_quants(32, 31, x, weights, L + 32 * sub, &mins[sub], scratch, -0.5f, 0.1f, 15, false);
            max_scale = std::max(max_scale, scales[sub]);
            max_min = std::max(max_min, mins[sub]);
        }

        const float inv_scale = max_scale > 0.0f ? 63.f / max_scale : 0.0f;
        const float inv_min = max_min > 0.0f ? 63.f / max_min : 0.0f;
        std::memset(b[i].scales, 0, sizeof(b[i].scales));
        for (int sub = 0; sub < 8; ++sub) {
            const auto ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[sub]));
            const auto lm = static_cast<uint8_t>(nearest_int(inv_min * mins[sub]));
            set_scale_min_k4(sub, std::min<uint8_t>(63, ls), std::min<uint8_t>(63, lm), b[i].scales);
        }
        b[i].d = fp32_to_fp16(max_scale / 63.f);
        b[i].dmin = fp32_to_fp16(max_min / 63.f);

        // Re-round against the stored scales; sub-blocks with a zero scale keep the search's quants.
        for (int sub = 0; sub < 8; ++sub) {
            uint8_t sc, m;
            get_scale_min_k4(sub, b[i].scales, &sc, &m);
            const float d = fp16_to_fp32(b[i].d) * static_cast<float>(sc);
            if (d == 0.0f) continue;
            const float dm = fp16_to_fp32(b[i].dmin) * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) {
                const int q = nearest_int((src[32 * sub + l] + dm) / d);
                L[32 * sub + l] = static_cast<uint8_t>(std::max(0, std::min(31, q)));
            }
        }

        std::memset(b[i].qh, 0, sizeof(b[i].qh));
        for (int chunk = 0; chunk < 4; ++chunk) {
            const uint8_t* Lc = L + 64 * chunk;
            for (int l = 0; l < 32; ++l) {
                const int lo = Lc[l], hi = Lc[l + 32];
                b[i].qs[32 * chunk + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
                b[i].qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * chunk)) | ((hi >> 4) << (2 * chunk + 1)));
            }
        }
    }
}

float dot_q5_k_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ5_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        int scaled_sum = 0, min_sum = 0;
        for (int sub = 0; sub < 8; ++sub) {
            uint8_t sc, m;
            get_scale_min_k4(sub, w[i].scales, &sc, &m);
            int s = 0;
            for (int l = 0; l < 32; ++l) s += a[i].qs[32 * sub + l] * quant_at(w[i], 32 * sub + l);
            scaled_sum += sc * s;
            min_sum += m * (a[i].bsums[2 * sub] + a[i].bsums[2 * sub + 1]);
        }
        const float d = fp16_to_fp32(w[i].d) * a[i].d;
        const float dmin = fp16_to_fp32(w[i].dmin) * a[i].d;
        sum += d * static_cast<float>(scaled_sum) - dmin * static_cast<float>(min_sum);
    }
    return sum;
}

}  // namespace strata
