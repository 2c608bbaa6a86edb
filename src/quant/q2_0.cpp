#include "quant/q2_0.h"

#include <cmath>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/legacy.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % BlockQ2_0::kValues == 0, "Q2_0 rows hold a multiple of 64 values");
    return n / BlockQ2_0::kValues;
}

int code(const BlockQ2_0& b, int j) { return (b.qs[j / 4] >> (2 * (j % 4))) & 3; }

}  // namespace

void dequantize_row_q2_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ2_0*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += BlockQ2_0::kValues) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < BlockQ2_0::kValues; ++j) dst[j] = static_cast<float>(code(b[i], j) - 1) * d;
    }
}

void quantize_row_q2_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ2_0*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += BlockQ2_0::kValues) {
        float amax = 0.0f;
        for (int j = 0; j < BlockQ2_0::kValues; ++j) amax = std::fabs(src[j]) > amax ? std::fabs(src[j]) : amax;
        // 1/d from the unrounded maximum, as ggml does; the stored d is its fp16 rounding.
        const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
        b[i].d = fp32_to_fp16(amax);
        for (uint8_t& q : b[i].qs) q = 0;
        for (int j = 0; j < BlockQ2_0::kValues; ++j) {
            int q = static_cast<int>(std::round(src[j] * id)) + 1;  // std::round: halves away from zero
            q = q < 0 ? 0 : (q > 3 ? 3 : q);
            b[i].qs[j / 4] = static_cast<uint8_t>(b[i].qs[j / 4] | (q << (2 * (j % 4))));
        }
    }
}

float dot_q2_0_q8_0(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ2_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        float block = 0.0f;
        for (int k = 0; k < 2; ++k) {
            const BlockQ8_0& ak = a[2 * i + k];
            int sumi = 0;
            for (int j = 0; j < 32; ++j) sumi += (code(w[i], 32 * k + j) - 1) * ak.qs[j];
            block += fp16_to_fp32(ak.d) * static_cast<float>(sumi);
        }
        sum += fp16_to_fp32(w[i].d) * block;
    }
    return sum;
}

}  // namespace strata
