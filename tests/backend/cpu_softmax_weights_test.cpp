// The CPU attention's softmax weights (backend/cpu/softmax_weights.h): the AVX2 kernels against
// the scalar ones (std::exp), over lengths around the eight-lane blocks: the same largest score,
// weights within a few ulp of e^(score − max) where std::exp gives them, exactly 0 under the
// floor, and the sum of the weights they wrote.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backend/cpu/softmax_weights.h"
#include "quant/cpu/cpu_features.h"

namespace strata {
namespace {

TEST(SoftmaxWeights, Avx2AgreesWithStdExp) {
    if (cpu_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "this CPU has no AVX2";
    const SoftmaxWeightKernels& scalar = softmax_weight_kernels_scalar();
    const SoftmaxWeightKernels& avx2 = softmax_weight_kernels_avx2();
    std::mt19937 rng(9);
    std::normal_distribution<float> dist(0.0f, 12.0f);  // wide: some scores fall under the floor
    for (const int64_t n : {1, 7, 8, 9, 16, 100, 517}) {
        std::vector<float> scores(static_cast<size_t>(n));
        for (float& s : scores) s = dist(rng);
        for (const float init : {-INFINITY, 3.0f}) {
            EXPECT_EQ(avx2.max(scores.data(), n, init), scalar.max(scores.data(), n, init)) << n;
        }
        const float max = scalar.max(scores.data(), n, -INFINITY);
        std::vector<float> want = scores, got = scores;
        const float want_sum = scalar.weights(want.data(), n, max, -50.0f);
        const float got_sum = avx2.weights(got.data(), n, max, -50.0f);
        double sum = 0;
        int zeros = 0;
        for (int64_t j = 0; j < n; ++j) {
            const size_t i = static_cast<size_t>(j);
            if (scores[i] - max < -50.0f) {
                EXPECT_EQ(got[i], 0.0f) << "under the floor, n " << n << " j " << j;
                ++zeros;
            } else {
                EXPECT_NEAR(got[i], want[i], 4 * std::numeric_limits<float>::epsilon() * want[i]) << "n " << n << " j " << j;
            }
            sum += got[i];
        }
        EXPECT_NEAR(got_sum, sum, 1e-5 * sum) << n;
        EXPECT_NEAR(got_sum, want_sum, 1e-5 * want_sum) << n;
        if (n == 517) {
            EXPECT_GT(zeros, 0) << "no score fell under the floor: the case tests nothing";
        }
    }
}

}  // namespace
}  // namespace strata
