#include "quant/mxfp4.h"

#include <bit>
#include <cmath>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/e2m1.h"
#include "quant/legacy.h"

namespace strata {

namespace {

// 2^(e − 128), i.e. the block scale halved. e = 0 and 1 give float subnormals, built by bits.
float half_scale(uint8_t e) {
    const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
    return std::bit_cast<float>(bits);
}

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % 32 == 0, "MXFP4 rows hold a multiple of 32 values");
    return n / 32;
}

}  // namespace

void dequantize_row_mxfp4(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockMxfp4*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += 32) {
        const float d = half_scale(b[i].e);
        for (int j = 0; j < 16; ++j) {
            dst[j] = static_cast<float>(kE2M1Doubled[b[i].qs[j] & 0x0F]) * d;
            dst[j + 16] = static_cast<float>(kE2M1Doubled[b[i].qs[j] >> 4]) * d;
        }
    }
}

void quantize_row_mxfp4(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockMxfp4*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += 32) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::fabs(src[j]) > amax ? std::fabs(src[j]) : amax;
        // The largest E2M1 magnitude is 6 = 1.5·2^2, so the exponent is floor(log2(amax)) − 2.
        const uint8_t e = amax > 0.0f ? static_cast<uint8_t>(std::floor(std::log2(amax)) - 2 + 127) : 0;
        const float d = half_scale(e);
        b[i].e = e;
        for (int j = 0; j < 16; ++j) {
            b[i].qs[j] = static_cast<uint8_t>(nearest_e2m1_code(src[j], d) | (nearest_e2m1_code(src[j + 16], d) << 4));
        }
    }
}

float dot_mxfp4_q8_0(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockMxfp4*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const float d = fp16_to_fp32(a[i].d) * half_scale(w[i].e);
        int sumi = 0;
        for (int j = 0; j < 16; ++j) {
            sumi += a[i].qs[j] * kE2M1Doubled[w[i].qs[j] & 0x0F];
            sumi += a[i].qs[j + 16] * kE2M1Doubled[w[i].qs[j] >> 4];
        }
        sum += d * static_cast<float>(sumi);
    }
    return sum;
}

}  // namespace strata
