// The f32 row kernels (backend/cpu/f32_rows.h): the AVX2 kernels give the bits of the eight-lane
// dot product and of the row-by-row accumulation the scalar ones do, for row counts around the
// eight-row step, lengths around the eight-lane step (576: MLA's latent + rope key) and rows
// spaced as in a cache of several heads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/f32_rows.h"
#include "quant/cpu/cpu_features.h"

namespace strata {
namespace {

std::vector<float> random_floats(int64_t n, std::mt19937& rng) {
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(F32RowKernels, ScalarKernelsAreTheEightLaneArithmetic) {
    std::mt19937 rng(21);
    const F32RowKernels& k = f32_row_kernels_scalar();
    for (int64_t n : {5, 64, 67, 128}) {
        const int64_t n_rows = 6, stride = n + 5;
        const std::vector<float> rows = random_floats(n_rows * stride, rng), q = random_floats(n, rng), w = random_floats(n_rows, rng);
        std::vector<float> got(static_cast<size_t>(n_rows)), want(got.size());
        k.dots(q.data(), rows.data(), stride, n_rows, n, 0.125f, got.data());
        for (int64_t i = 0; i < n_rows; ++i) want[i] = dot_eight_lanes(q.data(), rows.data() + i * stride, n) * 0.125f;
        EXPECT_TRUE(same_bits(got, want)) << "dots n " << n;
        std::vector<float> acc(static_cast<size_t>(n), 0.5f), acc_want = acc;
        k.accumulate(w.data(), 0.3f, rows.data(), stride, n_rows, n, acc.data());
        for (int64_t i = 0; i < n_rows; ++i) {
            for (int64_t d = 0; d < n; ++d) acc_want[d] += (w[i] * 0.3f) * rows[i * stride + d];
        }
        EXPECT_TRUE(same_bits(acc, acc_want)) << "accumulate n " << n;
    }
}

TEST(F32RowKernels, Avx2KernelsGiveTheScalarKernelsBits) {
    if (cpu_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "this CPU has no AVX2";
    std::mt19937 rng(22);
    const F32RowKernels& scalar = f32_row_kernels_scalar();
    const F32RowKernels& avx2 = f32_row_kernels_avx2();
    for (int64_t n : {5, 64, 67, 128, 576}) {
        for (int64_t n_rows : {1, 4, 7, 8, 9, 17}) {
            for (int64_t stride : {n, 3 * n + 8}) {
                const std::vector<float> rows = random_floats(n_rows * stride, rng), q = random_floats(n, rng);
                const std::vector<float> w = random_floats(n_rows, rng);
                std::vector<float> a(static_cast<size_t>(n_rows)), b(a.size());
                scalar.dots(q.data(), rows.data(), stride, n_rows, n, 0.2f, a.data());
                avx2.dots(q.data(), rows.data(), stride, n_rows, n, 0.2f, b.data());
                EXPECT_TRUE(same_bits(a, b)) << "dots n " << n << " rows " << n_rows << " stride " << stride;
                std::vector<float> x(static_cast<size_t>(n), -1.0f), y = x;
                scalar.accumulate(w.data(), 0.7f, rows.data(), stride, n_rows, n, x.data());
                avx2.accumulate(w.data(), 0.7f, rows.data(), stride, n_rows, n, y.data());
                EXPECT_TRUE(same_bits(x, y)) << "accumulate n " << n << " rows " << n_rows << " stride " << stride;
            }
        }
    }
}

}  // namespace
}  // namespace strata
