// Rows of arbitrary bytes — what a corrupt or crafted file holds: NaN and infinite fp16 scales,
// every code and grid index — through each registered type's dequantizer, scalar dot product and
// every SIMD kernel this CPU runs. None may read out of its row (the sanitizer build checks that),
// and a kernel never makes a non-finite number out of finite data: where every dequantized value
// and every product is finite, the scalar reference and each kernel give finite sums that agree
// (within 1e-6 of Σ|w·a|, as for sane rows); where the data hold NaN or infinity, any result is
// allowed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "quant/cpu/dot_kernels.h"
#include "quant/traits.h"

namespace strata {
namespace {

std::vector<DotFn> kernels_of(TensorType type) {
    std::vector<DotFn> out;
    for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
        if (cpu_simd_level() < level) continue;
        if (DotFn f = cpu_dot_kernel_exact(type, level)) out.push_back(f);
    }
    return out;
}

TEST(QuantRandomBytes, NoKernelMakesNonFiniteSumsOfFiniteData) {
    size_t count = 0;
    const QuantTraits* traits = all_quant_traits(&count);
    std::mt19937 rng(77);
    std::uniform_int_distribution<int> byte(0, 255);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    int finite_rows = 0, non_finite_rows = 0;
    for (size_t t = 0; t < count; ++t) {
        const QuantTraits& q = traits[t];
        if (!q.dot) continue;
        const TensorTypeInfo* info = tensor_type_info(q.type);
        const int64_t n = info->block_size == 1 ? 512 : 4 * static_cast<int64_t>(info->block_size);
        const std::vector<DotFn> kernels = kernels_of(q.type);
        for (int trial = 0; trial < 64; ++trial) {
            std::vector<uint8_t> w(info->row_bytes(static_cast<uint64_t>(n)));
            for (uint8_t& b : w) b = static_cast<uint8_t>(byte(rng));
            std::vector<float> x(static_cast<size_t>(n));
            for (float& v : x) v = normal(rng);
            std::vector<uint8_t> act(tensor_type_info(q.dot_type)->row_bytes(static_cast<uint64_t>(n)));
            quant_traits(q.dot_type).quantize_row(x.data(), act.data(), n);

            std::vector<float> wv(static_cast<size_t>(n)), av(static_cast<size_t>(n));
            q.dequantize_row(w.data(), wv.data(), n);
            quant_traits(q.dot_type).dequantize_row(act.data(), av.data(), n);
            double magnitude = 0.0;
            bool finite = true;
            for (int64_t i = 0; i < n; ++i) {
                finite = finite && std::isfinite(wv[static_cast<size_t>(i)]);
                magnitude += std::fabs(double(wv[static_cast<size_t>(i)]) * av[static_cast<size_t>(i)]);
            }
            // Sums that could pass float's range on the way are not "finite data" either.
            finite = finite && magnitude < 1e30;
            const float want = q.dot(w.data(), act.data(), n);
            std::vector<float> got;
            for (DotFn f : kernels) got.push_back(f(w.data(), act.data(), n));
            if (!finite) {
                ++non_finite_rows;
                continue;
            }
            ++finite_rows;
            ASSERT_TRUE(std::isfinite(want)) << tensor_type_name(q.type) << " scalar reference, trial " << trial;
            for (size_t k = 0; k < got.size(); ++k) {
                ASSERT_TRUE(std::isfinite(got[k])) << tensor_type_name(q.type) << " kernel " << k << ", trial " << trial;
                EXPECT_NEAR(got[k], want, 1e-6 * magnitude + 1e-30) << tensor_type_name(q.type) << " kernel " << k;
            }
        }
    }
    // Both kinds of rows were met (random fp16 scales are NaN or infinite 1/32 of the time).
    EXPECT_GT(finite_rows, 0);
    EXPECT_GT(non_finite_rows, 0);
}

}  // namespace
}  // namespace strata
