#include "backend/cpu/softmax_weights.h"

#include <algorithm>
#include <cmath>

#include "quant/cpu/cpu_features.h"

namespace strata {

namespace {
float max_scalar(const float* scores, int64_t n, float init) {
    float max = init;
    for (int64_t j = 0; j < n; ++j) max = std::max(max, scores[j]);
    return max;
}

float weights_scalar(float* scores, int64_t n, float max, float floor) {
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
        const float x = scores[j] - max;
        scores[j] = x < floor ? 0.0f : std::exp(x);
        sum += scores[j];
    }
    return sum;
}
}  // namespace

const SoftmaxWeightKernels& softmax_weight_kernels_scalar() {
    static const SoftmaxWeightKernels k{max_scalar, weights_scalar};
    return k;
}

const SoftmaxWeightKernels& softmax_weight_kernels(float floor) {
    constexpr float kExp8Lowest = -87.0f;
    return cpu_simd_level() >= SimdLevel::Avx2 && floor >= kExp8Lowest ? softmax_weight_kernels_avx2()
                                                                       : softmax_weight_kernels_scalar();
}

}  // namespace strata
