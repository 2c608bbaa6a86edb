// Scalar reference code of the 4-bit non-linear formats. Dequantization does ggml's float
// operations in the same order (the library is built with -ffp-contract=off), so values match the
// reference vectors bit for bit; the dots sum level·quant products in integers per 32 values.
#include "quant/iq4.h"

#include "core/check.h"
#include "core/fp16.h"
#include "quant/iq_grids.h"
#include "quant/legacy.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

// Writes the 32 values of one group: d·level, low nibbles first, then high nibbles.
void decode_group(float d, const uint8_t* qs, float* dst) {
    for (int j = 0; j < 16; ++j) {
        dst[j] = d * static_cast<float>(kIq4nlValues[qs[j] & 0xF]);
        dst[j + 16] = d * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
    }
}

int32_t dot_group(const uint8_t* qs, const int8_t* q8) {
    int32_t lo = 0, hi = 0;
    for (int j = 0; j < 16; ++j) {
        lo += q8[j] * kIq4nlValues[qs[j] & 0xF];
        hi += q8[j + 16] * kIq4nlValues[qs[j] >> 4];
    }
    return lo + hi;
}

int iq4xs_scale_code(const BlockIq4Xs& b, int g) {
    return ((b.scales_l[g / 2] >> (4 * (g % 2))) & 0xF) | (((b.scales_h >> (2 * g)) & 3) << 4);
}

}  // namespace

void dequantize_row_iq4_nl(const void* src, float* dst, int64_t n) {
    STRATA_CHECK(n % 32 == 0, "IQ4_NL rows hold a multiple of 32 values");
    const auto* b = static_cast<const BlockIq4Nl*>(src);
    for (int64_t i = 0; i < n / 32; ++i, dst += 32) decode_group(fp16_to_fp32(b[i].d), b[i].qs, dst);
}

void dequantize_row_iq4_xs(const void* src, float* dst, int64_t n) {
    STRATA_CHECK(n % 256 == 0, "IQ4_XS rows hold a multiple of 256 values");
    const auto* b = static_cast<const BlockIq4Xs*>(src);
    for (int64_t i = 0; i < n / 256; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int g = 0; g < 8; ++g, dst += 32) {
            decode_group(d * static_cast<float>(iq4xs_scale_code(b[i], g) - 32), b[i].qs + 16 * g, dst);
        }
    }
}

float dot_iq4_nl_q8_0(const void* weights, const void* activation, int64_t n) {
    STRATA_CHECK(n % 32 == 0, "IQ4_NL rows hold a multiple of 32 values");
    const auto* w = static_cast<const BlockIq4Nl*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 32; ++i) {
        const float d = fp16_to_fp32(a[i].d) * fp16_to_fp32(w[i].d);
        sum += d * static_cast<float>(dot_group(w[i].qs, a[i].qs));
    }
    return sum;
}

float dot_iq4_xs_q8_k(const void* weights, const void* activation, int64_t n) {
    STRATA_CHECK(n % 256 == 0, "IQ4_XS rows hold a multiple of 256 values");
    const auto* w = static_cast<const BlockIq4Xs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / 256; ++i) {
        const float d = fp16_to_fp32(w[i].d) * a[i].d;
        for (int g = 0; g < 8; ++g) {
            const float dg = d * static_cast<float>(iq4xs_scale_code(w[i], g) - 32);
            sum += dg * static_cast<float>(dot_group(w[i].qs + 16 * g, a[i].qs + 32 * g));
        }
    }
    return sum;
}

}  // namespace strata
