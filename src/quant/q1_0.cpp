#include "quant/q1_0.h"

#include <cmath>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/legacy.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % BlockQ1_0::kValues == 0, "Q1_0 rows hold a multiple of 128 values");
    return n / BlockQ1_0::kValues;
}

}  // namespace

void dequantize_row_q1_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ1_0*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += BlockQ1_0::kValues) {
        const float d = fp16_to_fp32(b[i].d);
        const float neg_d = -d;
        for (int j = 0; j < BlockQ1_0::kValues; ++j) dst[j] = (b[i].qs[j / 8] >> (j % 8)) & 1 ? d : neg_d;
    }
}

void quantize_row_q1_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ1_0*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += BlockQ1_0::kValues) {
        // The mean magnitude, not the maximum: the scale that minimises the squared error of ±d.
        float sum_abs = 0.0f;
        for (int j = 0; j < BlockQ1_0::kValues; ++j) sum_abs += std::fabs(src[j]);
        b[i].d = fp32_to_fp16(sum_abs / BlockQ1_0::kValues);
        for (uint8_t& q : b[i].qs) q = 0;
        for (int j = 0; j < BlockQ1_0::kValues; ++j) {
            if (src[j] >= 0.0f) b[i].qs[j / 8] = static_cast<uint8_t>(b[i].qs[j / 8] | (1u << (j % 8)));
        }
    }
}

float dot_q1_0_q8_0(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ1_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        // Per Q8_0 block an exact integer sum, scaled by the activation's d; then by the weight's.
        float block = 0.0f;
        for (int k = 0; k < 4; ++k) {
            const BlockQ8_0& ak = a[4 * i + k];
            int sumi = 0;
            for (int j = 0; j < 32; ++j) {
                const int bit = (w[i].qs[4 * k + j / 8] >> (j % 8)) & 1;
                sumi += bit ? ak.qs[j] : -ak.qs[j];
            }
            block += fp16_to_fp32(ak.d) * static_cast<float>(sumi);
        }
        sum += fp16_to_fp32(w[i].d) * block;
    }
    return sum;
}

}  // namespace strata
