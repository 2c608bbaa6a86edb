// AVX2 softmax weights for the CPU attention (backend/cpu/softmax_weights.h): eight scores at a
// time through exp8, where std::exp one score at a time was a fifth of a prompt's attention.
#include <immintrin.h>

#include <algorithm>

#include "backend/cpu/exp_avx2.h"
#include "backend/cpu/softmax_weights.h"

namespace strata {

namespace {
float lanes_max(__m256 v) {
    alignas(32) float lane[8];
    _mm256_store_ps(lane, v);
    return std::max(std::max(std::max(lane[0], lane[1]), std::max(lane[2], lane[3])),
                    std::max(std::max(lane[4], lane[5]), std::max(lane[6], lane[7])));
}

float max_avx2(const float* scores, int64_t n, float init) {
    __m256 m = _mm256_set1_ps(init);
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(scores + j));
    return softmax_weight_kernels_scalar().max(scores + j, n - j, lanes_max(m));  // the last few
}

float weights_avx2(float* scores, int64_t n, float max, float floor) {
    const __m256 mv = _mm256_set1_ps(max), fv = _mm256_set1_ps(floor);
    __m256 sum = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 x = _mm256_sub_ps(_mm256_loadu_ps(scores + j), mv);
        // Lanes under the floor are 0 (andnot with the mask of x < floor).
        const __m256 w = _mm256_andnot_ps(_mm256_cmp_ps(x, fv, _CMP_LT_OQ), exp8(x));
        _mm256_storeu_ps(scores + j, w);
        sum = _mm256_add_ps(sum, w);
    }
    alignas(32) float lane[8];
    _mm256_store_ps(lane, sum);
    const float s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    return s + softmax_weight_kernels_scalar().weights(scores + j, n - j, max, floor);  // the last few
}
}  // namespace

const SoftmaxWeightKernels& softmax_weight_kernels_avx2() {
    static const SoftmaxWeightKernels k{max_avx2, weights_avx2};
    return k;
}

}  // namespace strata
