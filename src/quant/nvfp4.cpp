#include "quant/nvfp4.h"

#include <cmath>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/e2m1.h"
#include "quant/legacy.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % BlockNvfp4::kValues == 0, "NVFP4 rows hold a multiple of 64 values");
    return n / BlockNvfp4::kValues;
}

}  // namespace

uint8_t fp32_to_ue4m3(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    int exp = static_cast<int>((bits >> 23) & 0xFF) - 127 + 7;
    if (exp <= 0) {
        // Subnormal: m·2^−9 with m = round(x·2^9), half up.
        const int man = static_cast<int>(x * 512.0f + 0.5f);
        if (man < 1) return 0;
        return static_cast<uint8_t>(man > 7 ? 7 : man);
    }
    if (exp >= 15) return 0x7E;
    int man = static_cast<int>((bits >> 20) & 0x7) + static_cast<int>((bits >> 19) & 1);
    if (man > 7) {
        man = 0;
        if (++exp >= 15) return 0x7E;
    }
    return static_cast<uint8_t>((exp << 3) | man);
}

void dequantize_row_nvfp4(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockNvfp4*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        for (int s = 0; s < 4; ++s, dst += BlockNvfp4::kSubValues) {
            const float d = ue4m3_half(b[i].d[s]);
            for (int j = 0; j < 8; ++j) {
                const uint8_t q = b[i].qs[8 * s + j];
                dst[j] = static_cast<float>(kE2M1Doubled[q & 0x0F]) * d;
                dst[j + 8] = static_cast<float>(kE2M1Doubled[q >> 4]) * d;
            }
        }
    }
}

void quantize_row_nvfp4(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockNvfp4*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        for (int s = 0; s < 4; ++s, src += BlockNvfp4::kSubValues) {
            float amax = 0.0f;
            for (int j = 0; j < 16; ++j) amax = amax < std::fabs(src[j]) ? std::fabs(src[j]) : amax;
            // The largest E2M1 magnitude is 6: amax / 6 maps it onto amax.
            b[i].d[s] = fp32_to_ue4m3(amax / 6.0f);
            const float d = ue4m3_half(b[i].d[s]);
            for (int j = 0; j < 8; ++j) {
                b[i].qs[8 * s + j] = static_cast<uint8_t>(nearest_e2m1_code(src[j], d) | (nearest_e2m1_code(src[j + 8], d) << 4));
            }
        }
    }
}

float dot_nvfp4_q8_0(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockNvfp4*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        for (int s = 0; s < 4; ++s) {
            // Sub-blocks 0-1 meet the first Q8_0 block, 2-3 the second.
            const BlockQ8_0& as = a[2 * i + s / 2];
            const int8_t* q8 = as.qs + 16 * (s % 2);
            int sumi = 0;
            for (int j = 0; j < 8; ++j) {
                const uint8_t q = w[i].qs[8 * s + j];
                sumi += q8[j] * kE2M1Doubled[q & 0x0F] + q8[j + 8] * kE2M1Doubled[q >> 4];
            }
            sum += fp16_to_fp32(as.d) * ue4m3_half(w[i].d[s]) * static_cast<float>(sumi);
        }
    }
    return sum;
}

}  // namespace strata
