#include "quant/q8_k.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/check.h"
#include "quant/k_quant_search.h"

namespace strata {

void quantize_row_q8_k(const float* src, void* dst, int64_t n) {
    STRATA_CHECK(n % 256 == 0, "Q8_K rows hold a multiple of 256 values");
    auto* b = static_cast<BlockQ8_K*>(dst);
    for (int64_t i = 0; i < n / 256; ++i, src += 256) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 256; ++j) {
            if (std::fabs(src[j]) > amax) {
                amax = std::fabs(src[j]);
                max = src[j];
            }
        }
        if (amax == 0.0f) {
            std::memset(&b[i], 0, sizeof(b[i]));
            continue;
        }
        // −127/max rather than −128/max: ggml's choice (its IQ2_XXS SIMD kernels rely on it), and
        // the bytes of every Q8_K activation depend on it.
        const float iscale = -127.f / max;
        for (int j = 0; j < 256; ++j) b[i].qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * src[j])));
        for (int g = 0; g < 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += b[i].qs[16 * g + j];
            b[i].bsums[g] = static_cast<int16_t>(sum);
        }
        b[i].d = 1 / iscale;
    }
}

void dequantize_row_q8_k(const void* src, float* dst, int64_t n) {
    STRATA_CHECK(n % 256 == 0, "Q8_K rows hold a multiple of 256 values");
    const auto* b = static_cast<const BlockQ8_K*>(src);
    for (int64_t i = 0; i < n / 256; ++i, dst += 256) {
        for (int j = 0; j < 256; ++j) dst[j] = b[i].d * static_cast<float>(b[i].qs[j]);
    }
}

}  // namespace strata
