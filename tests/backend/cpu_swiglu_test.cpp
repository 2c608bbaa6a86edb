// cpu_swiglu's SIMD versions (backend/cpu/swiglu_kernels.h) against the scalar formula
// g / (1 + e^−g) · up evaluated with std::exp: within 4e-7 relative (a few ulp) over gates from
// −100 to 100, with lengths that leave a scalar tail, and NaN gates stay NaN. Skipped where the
// CPU lacks the instruction set.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backend/cpu/ops.h"
#include "backend/cpu/swiglu_kernels.h"
#include "quant/cpu/cpu_features.h"

namespace strata {
namespace {

float reference(float g, float up) { return g / (1.0f + std::exp(-g)) * up; }

TEST(CpuSwiglu, Avx2MatchesTheScalarFormula) {
    if (cpu_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "this CPU has no AVX2: only the scalar loop runs here";
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> gate_dist(-100.0f, 100.0f), up_dist(-3.0f, 3.0f);
    for (int64_t n : {1, 7, 8, 61, 6144}) {
        std::vector<float> gate(static_cast<size_t>(n)), up(gate.size());
        for (size_t i = 0; i < gate.size(); ++i) {
            gate[i] = i % 5 == 0 ? gate_dist(rng) * 0.01f : gate_dist(rng);  // many near zero too
            up[i] = up_dist(rng);
        }
        gate[0] = 0.0f;
        std::vector<float> got = gate;
        swiglu_avx2(got.data(), up.data(), n);
        for (size_t i = 0; i < gate.size(); ++i) {
            const float want = reference(gate[i], up[i]);
            EXPECT_NEAR(got[i], want, 4e-7f * std::fabs(want) + 1e-30f) << "gate " << gate[i] << ", up " << up[i];
        }
    }
}

TEST(CpuSwiglu, Avx2KeepsNaN) {
    if (cpu_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "this CPU has no AVX2: only the scalar loop runs here";
    std::vector<float> gate(16, 1.0f), up(16, 1.0f);
    gate[3] = std::numeric_limits<float>::quiet_NaN();
    swiglu_avx2(gate.data(), up.data(), 16);
    EXPECT_TRUE(std::isnan(gate[3]));
    EXPECT_NEAR(gate[4], reference(1.0f, 1.0f), 1e-6f);
}

TEST(CpuSwiglu, DispatchGivesTheKernelsValues) {
    // cpu_swiglu is what the blocks call: on this CPU it must give what the chosen kernel gives.
    std::vector<float> gate = {-5.0f, -0.5f, 0.0f, 0.25f, 3.0f, 40.0f, -90.0f, 2.0f, 1.0f};
    std::vector<float> up(gate.size(), 1.5f), got = gate;
    cpu_swiglu(got.data(), up.data(), static_cast<int64_t>(got.size()));
    for (size_t i = 0; i < gate.size(); ++i) {
        const float want = reference(gate[i], up[i]);
        EXPECT_NEAR(got[i], want, 4e-7f * std::fabs(want) + 1e-30f) << "gate " << gate[i];
    }
}

}  // namespace
}  // namespace strata
