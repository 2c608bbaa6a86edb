// The f32 × f32 dot (router weights of MoE models, f32 models) with avx2. The scalar reference
// accumulates in double one element at a time: a chain of dependent adds that made the router of
// a Qwen3-MoE decode ~7% of the token for ~2% of its bytes. Here the sum stays in double (the
// same precision as the reference; products are even formed in double) but in 16 independent lanes.
#include <immintrin.h>

#include "quant/cpu/dot_kernels_avx2.h"

namespace strata {

float dot_f32_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const float*>(weights);
    const auto* a = static_cast<const float*>(activation);
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int k = 0; k < 4; ++k) {
            const __m256d wk = _mm256_cvtps_pd(_mm_loadu_ps(w + i + 4 * k));
            const __m256d ak = _mm256_cvtps_pd(_mm_loadu_ps(a + i + 4 * k));
            acc[k] = _mm256_fmadd_pd(wk, ak, acc[k]);
        }
    }
    const __m256d s = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, s);
    double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; i < n; ++i) sum += static_cast<double>(w[i]) * static_cast<double>(a[i]);
    return static_cast<float>(sum);
}

}  // namespace strata
