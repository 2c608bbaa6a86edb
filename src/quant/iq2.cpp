// Scalar reference code of the 2-bit IQ formats. Dequantization does ggml's float operations in
// the same order (the library is built with -ffp-contract=off), so values match the reference
// vectors bit for bit. The dots sum the integer products of grid bytes, signs and Q8_K quants per
// group, apply the 4-bit group scale as the odd integer 2s+1 (= 2·(s + ½)), and fold the remaining
// factor 1/8 (1/4 of the format times the ½ taken into 2s+1) into the final float.
#include "quant/iq2.h"

#include <cstring>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/iq_grids.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "IQ2 rows hold a multiple of 256 values");
    return n / 256;
}

uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

// The scale of a group from its 4-bit code, as ggml computes it: d·(s + ½)·¼.
float group_scale(float d, uint32_t s) { return d * (0.5f + static_cast<float>(s)) * 0.25f; }

// Writes the 8 values of one group: scale · grid byte, negated where the sign mask has a bit.
void decode_group(float scale, uint64_t entry, uint8_t signs, float* dst) {
    for (int j = 0; j < 8; ++j) {
        const float v = scale * static_cast<float>(grid_byte(entry, j));
        dst[j] = sign_bit(signs, j) ? -v : v;
    }
}

// Σ ±grid byte · q over one group of 8.
int32_t dot_group(uint64_t entry, uint8_t signs, const int8_t* q8) {
    int32_t sum = 0;
    for (int j = 0; j < 8; ++j) {
        const int32_t p = grid_byte(entry, j) * q8[j];
        sum += sign_bit(signs, j) ? -p : p;
    }
    return sum;
}

// IQ2_S keeps the high 2 index bits of 32-group g's group l at bits 2l..2l+1 of qh[g].
int iq2s_index(const BlockIq2S& b, int g, int l) { return b.qs[4 * g + l] | (((b.qh[g] >> (2 * l)) & 3) << 8); }

}  // namespace

void dequantize_row_iq2_xxs(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockIq2Xxs*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = b[i].qs + 8 * g;
            const uint32_t signs_and_scale = load_u32(q + 4);
            const float scale = group_scale(d, signs_and_scale >> 28);
            for (int l = 0; l < 4; ++l, dst += 8) {
                decode_group(scale, kIq2xxsGrid[q[l]], kIq2SignTable[(signs_and_scale >> (7 * l)) & 127], dst);
            }
        }
    }
}

void dequantize_row_iq2_xs(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockIq2Xs*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int g = 0; g < 8; ++g) {
            const float scales[2] = {group_scale(d, b[i].scales[g] & 0xF), group_scale(d, b[i].scales[g] >> 4)};
            for (int l = 0; l < 4; ++l, dst += 8) {
                const uint16_t q = b[i].qs[4 * g + l];
                decode_group(scales[l / 2], kIq2xsGrid[q & 511], kIq2SignTable[q >> 9], dst);
            }
        }
    }
}

void dequantize_row_iq2_s(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockIq2S*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        const uint8_t* signs = b[i].qs + 32;
        for (int g = 0; g < 8; ++g) {
            const float scales[2] = {group_scale(d, b[i].scales[g] & 0xF), group_scale(d, b[i].scales[g] >> 4)};
            for (int l = 0; l < 4; ++l, dst += 8) {
                decode_group(scales[l / 2], kIq2sGrid[iq2s_index(b[i], g, l)], signs[4 * g + l], dst);
            }
        }
    }
}

float dot_iq2_xxs_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2Xxs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const int8_t* q8 = a[i].qs;
        int32_t block_sum = 0;
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = w[i].qs + 8 * g;
            const uint32_t signs_and_scale = load_u32(q + 4);
            int32_t group_sum = 0;
            for (int l = 0; l < 4; ++l, q8 += 8) {
                group_sum += dot_group(kIq2xxsGrid[q[l]], kIq2SignTable[(signs_and_scale >> (7 * l)) & 127], q8);
            }
            block_sum += group_sum * static_cast<int32_t>(2 * (signs_and_scale >> 28) + 1);
        }
        sum += fp16_to_fp32(w[i].d) * a[i].d * static_cast<float>(block_sum);
    }
    return 0.125f * sum;
}

float dot_iq2_xs_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2Xs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const int8_t* q8 = a[i].qs;
        int32_t block_sum = 0;
        for (int g = 0; g < 8; ++g) {
            int32_t half_sums[2] = {0, 0};
            for (int l = 0; l < 4; ++l, q8 += 8) {
                const uint16_t q = w[i].qs[4 * g + l];
                half_sums[l / 2] += dot_group(kIq2xsGrid[q & 511], kIq2SignTable[q >> 9], q8);
            }
            block_sum += half_sums[0] * (2 * (w[i].scales[g] & 0xF) + 1) + half_sums[1] * (2 * (w[i].scales[g] >> 4) + 1);
        }
        sum += fp16_to_fp32(w[i].d) * a[i].d * static_cast<float>(block_sum);
    }
    return 0.125f * sum;
}

float dot_iq2_s_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2S*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const int8_t* q8 = a[i].qs;
        const uint8_t* signs = w[i].qs + 32;
        int32_t block_sum = 0;
        for (int g = 0; g < 8; ++g) {
            int32_t half_sums[2] = {0, 0};
            for (int l = 0; l < 4; ++l, q8 += 8) {
                half_sums[l / 2] += dot_group(kIq2sGrid[iq2s_index(w[i], g, l)], signs[4 * g + l], q8);
            }
            block_sum += half_sums[0] * (2 * (w[i].scales[g] & 0xF) + 1) + half_sums[1] * (2 * (w[i].scales[g] >> 4) + 1);
        }
        sum += fp16_to_fp32(w[i].d) * a[i].d * static_cast<float>(block_sum);
    }
    return 0.125f * sum;
}

}  // namespace strata
