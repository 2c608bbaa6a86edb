// The q8_0 KV row kernels (backend/cpu/q8_rows.h): the scalar kernel gives exactly the reference
// dequantizer's values fed to the f32 path's eight-lane dot product and accumulation, and the AVX2
// kernel gives the scalar kernel's bits — for row counts around its four-row step, head widths
// from one block to MLA's 576, and rows spaced as in a cache of several heads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/f16_rows.h"
#include "backend/cpu/q8_rows.h"
#include "quant/cpu/cpu_features.h"
#include "quant/legacy.h"

namespace strata {
namespace {

struct Rows {
    int64_t n, row_bytes, n_rows;
    std::vector<uint8_t> bytes;
    std::vector<float> values;  // the reference dequantizer's
};

// n_rows rows of n values, each row a head at offset 0 of a cache row three heads wide.
Rows random_rows(int64_t n, int64_t n_rows, std::mt19937& rng) {
    std::normal_distribution<float> dist(0.0f, 2.0f);
    Rows r{n, 3 * n / 32 * 34, n_rows, {}, {}};
    r.bytes.assign(static_cast<size_t>(r.row_bytes * n_rows), 0xAB);  // the other heads: filler
    r.values.resize(static_cast<size_t>(n * n_rows));
    std::vector<float> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < n_rows; ++i) {
        for (float& v : row) v = dist(rng);
        quantize_row_q8_0(row.data(), r.bytes.data() + i * r.row_bytes, n);
        dequantize_row_q8_0(r.bytes.data() + i * r.row_bytes, r.values.data() + i * n, n);
    }
    return r;
}

std::vector<float> random_floats(int64_t n, std::mt19937& rng) {
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Q8Rows, ScalarIsTheReferenceDequantizerAndTheF32Path) {
    std::mt19937 rng(11);
    for (int64_t n : {32, 64, 128, 576}) {
        const Rows r = random_rows(n, 5, rng);
        const std::vector<float> q = random_floats(n, rng);
        std::vector<float> got(5), want(5);
        q8_row_kernels_scalar().dots(q.data(), r.bytes.data(), r.row_bytes, 5, n, 0.125f, got.data());
        for (int64_t i = 0; i < 5; ++i) want[i] = dot_eight_lanes(q.data(), r.values.data() + i * n, n) * 0.125f;
        EXPECT_TRUE(same_bits(got, want)) << "dots n=" << n;

        const std::vector<float> w = random_floats(5, rng);
        std::vector<float> acc(static_cast<size_t>(n), 0.5f), ref(static_cast<size_t>(n), 0.5f);
        q8_row_kernels_scalar().accumulate(w.data(), 0.25f, r.bytes.data(), r.row_bytes, 5, n, acc.data());
        for (int64_t i = 0; i < 5; ++i) {
            const float wi = w[i] * 0.25f;
            for (int64_t d = 0; d < n; ++d) ref[d] += wi * r.values[i * n + d];
        }
        EXPECT_TRUE(same_bits(acc, ref)) << "accumulate n=" << n;
    }
}

TEST(Q8Rows, Avx2GivesTheScalarBits) {
    if (cpu_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "this CPU has no AVX2";
    std::mt19937 rng(12);
    for (int64_t n : {32, 96, 128, 576}) {
        for (int64_t n_rows : {1, 3, 4, 5, 8, 9}) {
            const Rows r = random_rows(n, n_rows, rng);
            const std::vector<float> q = random_floats(n, rng);
            std::vector<float> a(static_cast<size_t>(n_rows)), b(static_cast<size_t>(n_rows));
            q8_row_kernels_scalar().dots(q.data(), r.bytes.data(), r.row_bytes, n_rows, n, 0.0883883f, a.data());
            q8_row_kernels_avx2().dots(q.data(), r.bytes.data(), r.row_bytes, n_rows, n, 0.0883883f, b.data());
            EXPECT_TRUE(same_bits(a, b)) << "dots n=" << n << " rows=" << n_rows;

            const std::vector<float> w = random_floats(n_rows, rng);
            std::vector<float> acc_a(static_cast<size_t>(n), -0.25f), acc_b = acc_a;
            q8_row_kernels_scalar().accumulate(w.data(), 0.3f, r.bytes.data(), r.row_bytes, n_rows, n, acc_a.data());
            q8_row_kernels_avx2().accumulate(w.data(), 0.3f, r.bytes.data(), r.row_bytes, n_rows, n, acc_b.data());
            EXPECT_TRUE(same_bits(acc_a, acc_b)) << "accumulate n=" << n << " rows=" << n_rows;
        }
    }
}

// Several query heads at once (the attention passes a kv head's group): each head's scores carry
// the bits the one-head kernel gives it, for head counts around the four-head step and row counts
// around the two-row step.
TEST(Q8Rows, DotsOfSeveralHeadsGiveEachHeadsBits) {
    std::mt19937 rng(14);
    std::vector<const Q8RowKernels*> kernels = {&q8_row_kernels_scalar()};
    if (cpu_simd_level() >= SimdLevel::Avx2) kernels.push_back(&q8_row_kernels_avx2());
    for (const Q8RowKernels* k : kernels) {
        for (int64_t n : {32, 128, 576}) {
            for (int64_t heads : {1, 3, 4, 5, 8}) {
                for (int64_t n_rows : {1, 2, 3, 7, 8}) {
                    const Rows r = random_rows(n, n_rows, rng);
                    const int64_t q_stride = n + 8, out_stride = n_rows + 5;
                    const std::vector<float> q = random_floats(heads * q_stride, rng);
                    std::vector<float> got(static_cast<size_t>(heads * out_stride), -7.0f), want = got;
                    k->dots_heads(q.data(), q_stride, heads, r.bytes.data(), r.row_bytes, n_rows, n, 0.0883883f, got.data(), out_stride);
                    for (int64_t h = 0; h < heads; ++h) {
                        k->dots(q.data() + h * q_stride, r.bytes.data(), r.row_bytes, n_rows, n, 0.0883883f, want.data() + h * out_stride);
                    }
                    EXPECT_TRUE(same_bits(got, want)) << (k == kernels.front() ? "scalar" : "avx2") << " n=" << n << " heads="
                                                      << heads << " rows=" << n_rows;
                }
            }
        }
    }
}

}  // namespace
}  // namespace strata
