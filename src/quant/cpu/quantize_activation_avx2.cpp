// AVX2 activation quantizers, byte for byte those of quant/q8_k.cpp (quantize_activation.h).

#include <immintrin.h>

#include <cstring>

#include "core/check.h"
#include "quant/cpu/quantize_activation.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

float horizontal_max(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// Eight products iscale·x rounded to the nearest integer (ties to even, as nearest_int's
// magic-number addition), capped at 127, as int32 whose low byte is the scalar code's int8 cast:
// the cast keeps the low byte, and so does the and-mask before the unsigned packs below. (Only
// NaN and infinite products, from NaN inputs or an overflowing scale, fall outside [−127, 127];
// both codes give them a low byte of zero.)
__m256i quantize8(const float* x, __m256 iscale) {
    const __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(iscale, _mm256_loadu_ps(x)));
    return _mm256_and_si256(_mm256_min_epi32(q, _mm256_set1_epi32(127)), _mm256_set1_epi32(0xff));
}

}  // namespace

void quantize_row_q8_k_avx2(const float* src, void* dst, int64_t n) {
    STRATA_CHECK(n % 256 == 0, "Q8_K rows hold a multiple of 256 values");
    auto* b = static_cast<BlockQ8_K*>(dst);
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t i = 0; i < n / 256; ++i, src += 256) {
        // max(|x|, m) keeps m when |x| is NaN, as the scalar `fabs(x) > amax` test skips it.
        __m256 amax8 = _mm256_setzero_ps();
        for (int j = 0; j < 256; j += 8) amax8 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(src + j), magnitude), amax8);
        const float amax = horizontal_max(amax8);
        if (amax == 0.0f) {
            std::memset(&b[i], 0, sizeof(b[i]));
            continue;
        }
        // The signed value of the first element of that magnitude, as the scalar loop keeps.
        float max = 0.0f;
        const __m256 target = _mm256_set1_ps(amax);
        for (int j = 0; j < 256; j += 8) {
            const int hits = _mm256_movemask_ps(
                _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(src + j), magnitude), target, _CMP_EQ_OQ));
            if (hits) {
                max = src[j + __builtin_ctz(static_cast<unsigned>(hits))];
                break;
            }
        }
        const float iscale = -127.f / max;
        const __m256 iscale8 = _mm256_set1_ps(iscale);
        // packus works within 128-bit lanes: the permute puts the 32 bytes back in order.
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        for (int j = 0; j < 256; j += 32) {
            const __m256i q01 = _mm256_packus_epi32(quantize8(src + j, iscale8), quantize8(src + j + 8, iscale8));
            const __m256i q23 = _mm256_packus_epi32(quantize8(src + j + 16, iscale8), quantize8(src + j + 24, iscale8));
            const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(q01, q23), order);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[i].qs + j), bytes);
        }
        for (int g = 0; g < 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += b[i].qs[16 * g + j];
            b[i].bsums[g] = static_cast<int16_t>(sum);
        }
        b[i].d = 1 / iscale;
    }
}

}  // namespace strata
