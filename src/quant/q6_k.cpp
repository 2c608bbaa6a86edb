// Q6_K: 6-bit quants (4 low bits + 2 high bits) with an int8 scale per 16 values
// (quant/k_quants.h).
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
    STRATA_CHECK(n % 256 == 0, "Q6_K rows hold a multiple of 256 values");
    return n / 256;
}

// Signed quant of value `v`. Per 128-value half: ql bytes 0-31 hold values 0-31 (low nibble) and
// 64-95 (high nibble), bytes 32-63 values 32-63 and 96-127; qh byte l holds the top two bits of
// values l, l+32, l+64, l+96 at shifts 0, 2, 4, 6.
int quant_at(const BlockQ6_K& b, int v) {
    const int half = v / 128, r = v % 128, l = r % 32, group = r / 32;
    const uint8_t low_byte = b.ql[64 * half + l + 32 * (group & 1)];
    const int low = group < 2 ? low_byte & 0xF : low_byte >> 4;
    const int high = (b.qh[32 * half + l] >> (2 * group)) & 3;
    return (low | (high << 4)) - 32;
}
}  // namespace

void dequantize_row_q6_k(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ6_K*>(src);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int v = 0; v < 256; ++v) {
            *dst++ = d * static_cast<float>(b[i].scales[v / 16]) * static_cast<float>(quant_at(b[i], v));
        }
    }
}

void quantize_row_q6_k(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ6_K*>(dst);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i, src += 256) {
        int8_t L[256];
        float scales[16];
        float max_scale = 0.0f, max_abs_scale = 0.0f;
        for (int sub = 0; sub < 16; ++sub) {
            scales[sub] = make_qx_quants(16, 32, src + 16 * sub, L + 16 * sub, nullptr);
            if (std::fabs(scales[sub]) > max_abs_scale) {
                max_abs_scale = std::fabs(scales[sub]);
                max_scale = scales[sub];
            }
        }
        if (max_abs_scale < 1e-15f) {
            std::memset(&b[i], 0, sizeof(b[i]));
            continue;
        }

        // The sub-scale of largest magnitude maps to −128, the wider end of int8.
        const float iscale = -128.f / max_scale;
        b[i].d = fp32_to_fp16(1 / iscale);
        for (int sub = 0; sub < 16; ++sub) {
            b[i].scales[sub] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[sub])));
        }

        for (int sub = 0; sub < 16; ++sub) {
            const float d = fp16_to_fp32(b[i].d) * static_cast<float>(b[i].scales[sub]);
            if (d == 0.0f) continue;
            for (int l = 0; l < 16; ++l) {
                const int q = nearest_int(src[16 * sub + l] / d);
                L[16 * sub + l] = static_cast<int8_t>(std::max(-32, std::min(31, q)) + 32);
            }
        }

        for (int half = 0; half < 2; ++half) {
            const int8_t* Lh = L + 128 * half;
            uint8_t* ql = b[i].ql + 64 * half;
            uint8_t* qh = b[i].qh + 32 * half;
            for (int l = 0; l < 32; ++l) {
                ql[l] = static_cast<uint8_t>((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
                ql[l + 32] = static_cast<uint8_t>((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
                qh[l] = static_cast<uint8_t>((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                                             ((Lh[l + 96] >> 4) << 6));
            }
        }
    }
}

float dot_q6_k_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ6_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        int scaled_sum = 0;
        for (int sub = 0; sub < 16; ++sub) {
            int s = 0;
            for (int l = 0; l < 16; ++l) s += a[i].qs[16 * sub + l] * quant_at(w[i], 16 * sub + l);
            scaled_sum += w[i].scales[sub] * s;
        }
        sum += fp16_to_fp32(w[i].d) * a[i].d * static_cast<float>(scaled_sum);
    }
    return sum;
}

}  // namespace strata
