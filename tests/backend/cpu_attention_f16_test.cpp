// The CPU attention over an f16 KV cache: its row kernels (F16C and scalar) do the f32 path's
// float operations on exactly widened halves, so an f16 cache gives bit for bit the attention of
// an f32 cache holding the same rounded values, with GQA, a sliding window, sinks and MLA's
// shape; and the rounding itself moves the output by no more than half precision allows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/attention.h"
#include "backend/attention_cache_cases.h"
#include "backend/cpu/f16_rows.h"
#include "core/fp16.h"
#include "quant/cpu/cpu_features.h"

namespace strata {
namespace {

// Random halves rows (finite, the range of keys and values), a query and weights.
struct Rows {
    std::vector<uint16_t> halves;
    std::vector<float> widened, q, weights;
};
Rows random_rows(int64_t n_rows, int64_t stride, int64_t n) {
    std::mt19937 rng(static_cast<uint32_t>(n_rows * 1000 + n));
    std::normal_distribution<float> normal(0.0f, 2.0f);
    Rows r;
    for (int64_t i = 0; i < n_rows * stride; ++i) {
        r.halves.push_back(fp32_to_fp16(normal(rng)));
        r.widened.push_back(fp16_to_fp32(r.halves.back()));
    }
    for (int64_t i = 0; i < n; ++i) r.q.push_back(normal(rng));
    for (int64_t i = 0; i < n_rows; ++i) r.weights.push_back(std::abs(normal(rng)));
    return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Row counts around the four-row blocks and lengths around the eight-lane steps and the scalar
// kernel's 64-value chunks (576: MLA's latent + rope key).
TEST(F16RowKernels, ScalarKernelsDoTheF32PathsArithmetic) {
    const F16RowKernels& k = f16_row_kernels_scalar();
    for (int64_t n : {5, 64, 67, 128, 576}) {
        for (int64_t n_rows : {1, 4, 7}) {
            const int64_t stride = n + 3;
            Rows r = random_rows(n_rows, stride, n);
            std::vector<float> got(static_cast<size_t>(n_rows)), want(got.size());
            k.dots(r.q.data(), r.halves.data(), stride, n_rows, n, 0.125f, got.data());
            for (int64_t i = 0; i < n_rows; ++i) want[i] = dot_eight_lanes(r.q.data(), r.widened.data() + i * stride, n) * 0.125f;
            EXPECT_TRUE(same_bits(got, want)) << "dots n " << n << " rows " << n_rows;
            std::vector<float> acc(static_cast<size_t>(n), 0.5f), acc_want = acc;
            k.accumulate(r.weights.data(), 0.3f, r.halves.data(), stride, n_rows, n, acc.data());
            for (int64_t i = 0; i < n_rows; ++i) {
                const float w = r.weights[i] * 0.3f;
                for (int64_t d = 0; d < n; ++d) acc_want[d] += w * r.widened[i * stride + d];
            }
            EXPECT_TRUE(same_bits(acc, acc_want)) << "accumulate n " << n << " rows " << n_rows;
        }
    }
}

TEST(F16RowKernels, Avx2KernelsGiveTheScalarKernelsFloats) {
    if (cpu_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "no AVX2/F16C on this CPU";
    const F16RowKernels& scalar = f16_row_kernels_scalar();
    const F16RowKernels& avx2 = f16_row_kernels_avx2();
    for (int64_t n : {5, 64, 67, 128, 576}) {
        for (int64_t n_rows : {1, 4, 7, 9}) {
            const int64_t stride = n + 3;
            Rows r = random_rows(n_rows, stride, n);
            std::vector<float> a(static_cast<size_t>(n_rows)), b(a.size());
            scalar.dots(r.q.data(), r.halves.data(), stride, n_rows, n, 0.2f, a.data());
            avx2.dots(r.q.data(), r.halves.data(), stride, n_rows, n, 0.2f, b.data());
            EXPECT_TRUE(same_bits(a, b)) << "dots n " << n << " rows " << n_rows;
            std::vector<float> x(static_cast<size_t>(n), -1.0f), y = x;
            scalar.accumulate(r.weights.data(), 0.7f, r.halves.data(), stride, n_rows, n, x.data());
            avx2.accumulate(r.weights.data(), 0.7f, r.halves.data(), stride, n_rows, n, y.data());
            EXPECT_TRUE(same_bits(x, y)) << "accumulate n " << n << " rows " << n_rows;
        }
    }
}

void round_to_f16(std::vector<float>& row) {
    for (float& x : row) x = fp16_to_fp32(fp32_to_fp16(x));
}

std::vector<test::AttentionCase> cases() {
    static const float sinks[4] = {0.5f, -1.0f, 2.0f, 0.0f};
    std::vector<test::AttentionCase> out;
    // A deep decode step (GQA 4:2), a prompt batch, a sliding window with sinks, and MLA's shape
    // (one kv head, keys wider than values, a length that is no multiple of eight).
    out.push_back({{4, 2, 64, 64, 0.125f}, 1, 200});
    out.push_back({{4, 2, 32, 32, 0.17f}, 70, 0});
    test::AttentionCase sw{{4, 2, 16, 16, 0.25f}, 9, 130};
    sw.p.sinks = sinks;
    sw.p.sliding_window = 70;
    out.push_back(sw);
    out.push_back({{4, 1, 44, 32, 0.15f}, 3, 90});
    return out;
}

TEST(CpuAttentionF16, SameAsF32OfTheRoundedValues) {
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    for (const test::AttentionCase& c : cases()) {
        const std::vector<float> f16 = test::attend(c, KvCacheType::F16, nullptr, ctx);
        const std::vector<float> f32 = test::attend(c, KvCacheType::F32, round_to_f16, ctx);
        ASSERT_EQ(f16.size(), f32.size());
        EXPECT_EQ(std::memcmp(f16.data(), f32.data(), f16.size() * sizeof(float)), 0)
            << "n_tokens " << c.n_tokens << " pos0 " << c.pos0;
    }
}

TEST(CpuAttentionF16, CloseToTheF32Cache) {
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    for (const test::AttentionCase& c : cases()) {
        const std::vector<float> f16 = test::attend(c, KvCacheType::F16, nullptr, ctx);
        const std::vector<float> f32 = test::attend(c, KvCacheType::F32, nullptr, ctx);
        double err = 0, norm = 0;
        for (size_t i = 0; i < f32.size(); ++i) {
            err += (double(f16[i]) - f32[i]) * (double(f16[i]) - f32[i]);
            norm += double(f32[i]) * f32[i];
        }
        // Half precision's relative rounding is 2^-11 ≈ 4.9e-4; squared, ~2.4e-7.
        EXPECT_LT(err / norm, 1e-6) << "n_tokens " << c.n_tokens << " pos0 " << c.pos0;
    }
}

}  // namespace
}  // namespace strata
