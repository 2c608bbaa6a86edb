// Q3_K: 3-bit quants (2 low bits + a high-bit mask) with a 6-bit signed scale per 16 values
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
    STRATA_CHECK(n % 256 == 0, "Q3_K rows hold a multiple of 256 values");
    return n / 256;
}

// Scale `j` (0..15) as stored, 0..63 (subtract 32 for the signed value): the low nibble is in
// byte j (j < 8) or the high nibble of byte j − 8; the top two bits are in byte 8 + j%4 at
// bit 2·(j/4).
int stored_scale(const uint8_t* scales, int j) {
    const int low = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
    const int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
    return low | (high << 4);
}

void store_scale(uint8_t* scales, int j, int value) {
    if (j < 8) {
        scales[j] = static_cast<uint8_t>(value & 0xF);
    } else {
        scales[j - 8] |= static_cast<uint8_t>((value & 0xF) << 4);
    }
    scales[8 + j % 4] |= static_cast<uint8_t>((value >> 4) << (2 * (j / 4)));
}

// Signed quant of value `v` (0..255): low 2 bits from the plane layout, −4 unless the hmask bit is set.
int quant_at(const BlockQ3_K& b, int v) {
    const int half = v / 128, r = v % 128;
    const int low = (b.qs[32 * half + r % 32] >> (2 * (r / 32))) & 3;
    const bool high = (b.hmask[v % 32] >> (v / 32)) & 1;
    return low - (high ? 0 : 4);
}
}  // namespace

void dequantize_row_q3_k(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ3_K*>(src);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int sub = 0; sub < 16; ++sub) {
            const float dl = d * static_cast<float>(stored_scale(b[i].scales, sub) - 32);
            for (int l = 0; l < 16; ++l) *dst++ = dl * static_cast<float>(quant_at(b[i], 16 * sub + l));
        }
    }
}

void quantize_row_q3_k(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ3_K*>(dst);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i, src += 256) {
        int8_t L[256];
        float scales[16];
        float max_scale = 0.0f, amax = 0.0f;
        for (int sub = 0; sub < 16; ++sub) {
            scales[sub] = make_q3_quants(16, 4, src + 16 * sub, L + 16 * sub);
            if (std::fabs(scales[sub]) > amax) {
                amax = std::fabs(scales[sub]);
                max_scale = scales[sub];
            }
        }

        std::memset(b[i].scales, 0, sizeof(b[i].scales));
        if (max_scale != 0.0f) {
            const float iscale = -32.f / max_scale;
            for (int sub = 0; sub < 16; ++sub) {
                // ggml narrows to int8 before clamping; the values fit, but keep the same steps.
                const auto l = static_cast<int8_t>(nearest_int(iscale * scales[sub]));
                store_scale(b[i].scales, sub, std::max(-32, std::min(31, static_cast<int>(l))) + 32);
            }
            b[i].d = fp32_to_fp16(1 / iscale);
        } else {
            b[i].d = fp32_to_fp16(0.0f);
        }

        // Re-round against the stored scales; sub-blocks with a zero scale keep the search's quants.
        for (int sub = 0; sub < 16; ++sub) {
            const float d = fp16_to_fp32(b[i].d) * static_cast<float>(stored_scale(b[i].scales, sub) - 32);
            if (d == 0.0f) continue;
            for (int l = 0; l < 16; ++l) {
                const int q = nearest_int(src[16 * sub + l] / d);
                L[16 * sub + l] = static_cast<int8_t>(std::max(-4, std::min(3, q)) + 4);
            }
        }

        std::memset(b[i].hmask, 0, sizeof(b[i].hmask));
        for (int v = 0; v < 256; ++v) {
            if (L[v] > 3) {
                b[i].hmask[v % 32] |= static_cast<uint8_t>(1 << (v / 32));
                L[v] = static_cast<int8_t>(L[v] - 4);
            }
        }
        for (int half = 0; half < 2; ++half) {
            const int8_t* Lh = L + 128 * half;
            for (int l = 0; l < 32; ++l) {
                b[i].qs[32 * half + l] =
                    static_cast<uint8_t>(Lh[l] | (Lh[l + 32] << 2) | (Lh[l + 64] << 4) | (Lh[l + 96] << 6));
            }
        }
    }
}

float dot_q3_k_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ3_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        int scaled_sum = 0;
        for (int sub = 0; sub < 16; ++sub) {
            int s = 0;
            for (int l = 0; l < 16; ++l) s += a[i].qs[16 * sub + l] * quant_at(w[i], 16 * sub + l);
            scaled_sum += (stored_scale(w[i].scales, sub) - 32) * s;
        }
        sum += fp16_to_fp32(w[i].d) * a[i].d * static_cast<float>(scaled_sum);
    }
    return sum;
}

}  // namespace strata
