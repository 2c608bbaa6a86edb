// Scalar reference code of the 3-bit IQ formats. Dequantization does ggml's float operations in
// the same order (the library is built with -ffp-contract=off), so values match the reference
// vectors bit for bit. The dots sum integer products per group of 32 and apply the group scale as
// the odd integer 2s+1; IQ3_XXS's (s + ½)/2 = (2s+1)/4 leaves a final factor ¼.
#include "quant/iq3.h"

#include <cstring>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/iq_grids.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "IQ3 rows hold a multiple of 256 values");
    return n / 256;
}

uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

// Writes the 8 values of one group from two 4-value grid entries: scale · grid byte, negated
// where the sign mask has a bit (bits 0-3 for the first entry, 4-7 for the second).
void decode_group(float scale, uint32_t first, uint32_t second, uint8_t signs, float* dst) {
    for (int j = 0; j < 4; ++j) {
        const float lo = scale * static_cast<float>(grid_byte(first, j));
        const float hi = scale * static_cast<float>(grid_byte(second, j));
        dst[j] = sign_bit(signs, j) ? -lo : lo;
        dst[j + 4] = sign_bit(signs, j + 4) ? -hi : hi;
    }
}

int32_t dot_group(uint32_t first, uint32_t second, uint8_t signs, const int8_t* q8) {
    int32_t sum = 0;
    for (int j = 0; j < 4; ++j) {
        const int32_t lo = grid_byte(first, j) * q8[j];
        const int32_t hi = grid_byte(second, j) * q8[j + 4];
        sum += sign_bit(signs, j) ? -lo : lo;
        sum += sign_bit(signs, j + 4) ? -hi : hi;
    }
    return sum;
}

// IQ3_S index k (0..7) of 32-group g: 8 bits from qs, the ninth from bit k of qh[g].
int iq3s_index(const BlockIq3S& b, int g, int k) { return b.qs[8 * g + k] | (((b.qh[g] >> k) & 1) << 8); }

// IQ3_S scale code of 32-group g: two per byte, low nibble first.
int iq3s_scale_code(const BlockIq3S& b, int g) { return (b.scales[g / 2] >> (4 * (g % 2))) & 0xF; }

}  // namespace

void dequantize_row_iq3_xxs(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockIq3Xxs*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = b[i].qs + 8 * g;
            const uint32_t signs_and_scale = load_u32(b[i].qs + 64 + 4 * g);
            const float scale = d * (0.5f + static_cast<float>(signs_and_scale >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, dst += 8) {
                decode_group(scale, kIq3xxsGrid[q[2 * l]], kIq3xxsGrid[q[2 * l + 1]],
                             kIq2SignTable[(signs_and_scale >> (7 * l)) & 127], dst);
            }
        }
    }
}

void dequantize_row_iq3_s(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockIq3S*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int g = 0; g < 8; ++g) {
            const float scale = d * static_cast<float>(1 + 2 * iq3s_scale_code(b[i], g));
            for (int l = 0; l < 4; ++l, dst += 8) {
                decode_group(scale, kIq3sGrid[iq3s_index(b[i], g, 2 * l)], kIq3sGrid[iq3s_index(b[i], g, 2 * l + 1)],
                             b[i].signs[4 * g + l], dst);
            }
        }
    }
}

float dot_iq3_xxs_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq3Xxs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const int8_t* q8 = a[i].qs;
        int32_t block_sum = 0;
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = w[i].qs + 8 * g;
            const uint32_t signs_and_scale = load_u32(w[i].qs + 64 + 4 * g);
            int32_t group_sum = 0;
            for (int l = 0; l < 4; ++l, q8 += 8) {
                group_sum += dot_group(kIq3xxsGrid[q[2 * l]], kIq3xxsGrid[q[2 * l + 1]],
                                       kIq2SignTable[(signs_and_scale >> (7 * l)) & 127], q8);
            }
            block_sum += group_sum * static_cast<int32_t>(2 * (signs_and_scale >> 28) + 1);
        }
        sum += fp16_to_fp32(w[i].d) * a[i].d * static_cast<float>(block_sum);
    }
    return 0.25f * sum;
}

float dot_iq3_s_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq3S*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const int8_t* q8 = a[i].qs;
        int32_t block_sum = 0;
        for (int g = 0; g < 8; ++g) {
            int32_t group_sum = 0;
            for (int l = 0; l < 4; ++l, q8 += 8) {
                group_sum += dot_group(kIq3sGrid[iq3s_index(w[i], g, 2 * l)], kIq3sGrid[iq3s_index(w[i], g, 2 * l + 1)],
                                       w[i].signs[4 * g + l], q8);
            }
            block_sum += group_sum * (2 * iq3s_scale_code(w[i], g) + 1);
        }
        sum += fp16_to_fp32(w[i].d) * a[i].d * static_cast<float>(block_sum);
    }
    return sum;
}

}  // namespace strata
