// The SIMD activation quantizers (quant/cpu/quantize_activation.h) against the scalar quantizer of
// their type, byte for byte (the scalar Q8_K quantizer is itself checked against ggml's vectors in
// quant_vectors_test): random rows at several scales and lengths, and the rows where a careless
// vector version would differ — magnitude ties of opposite sign, all-zero blocks, exact halves,
// a block whose scale overflows, NaN and infinite inputs. Levels the CPU lacks are skipped.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "quant/cpu/quantize_activation.h"
#include "quant/q8_k.h"

namespace strata {
namespace {

std::vector<BlockQ8_K> quantize_with(QuantizeRowFn quantize, const std::vector<float>& x) {
    std::vector<BlockQ8_K> out(x.size() / 256);
    quantize(x.data(), out.data(), static_cast<int64_t>(x.size()));
    return out;
}

void expect_same_bytes(const std::vector<float>& x, const char* what) {
    const QuantizeRowFn simd = cpu_quantize_activation(TensorType::Q8_K);
    const std::vector<BlockQ8_K> want = quantize_with(quantize_row_q8_k, x);
    const std::vector<BlockQ8_K> got = quantize_with(simd, x);
    for (size_t b = 0; b < want.size(); ++b) {
        EXPECT_EQ(std::memcmp(&want[b], &got[b], sizeof(BlockQ8_K)), 0)
            << what << ": block " << b << " differs (d " << want[b].d << " vs " << got[b].d << ")";
    }
}

class QuantizeActivationQ8K : public ::testing::Test {
protected:
    void SetUp() override {
        if (cpu_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "this CPU has no AVX2: only the scalar quantizer runs here";
        ASSERT_NE(cpu_quantize_activation(TensorType::Q8_K), &quantize_row_q8_k) << "the AVX2 quantizer is not chosen";
    }
};

TEST_F(QuantizeActivationQ8K, RandomRowsGiveTheScalarBytes) {
    std::mt19937 rng(7);
    for (float scale : {1e-3f, 1.0f, 37.5f, 3e4f}) {
        for (int64_t n : {256, 2048, 4096, 6144}) {
            std::normal_distribution<float> dist(0.0f, scale);
            std::vector<float> x(static_cast<size_t>(n));
            for (float& v : x) v = dist(rng);
            expect_same_bytes(x, "normal row");
        }
    }
}

TEST_F(QuantizeActivationQ8K, TiesInMagnitudeKeepTheFirstSign) {
    for (int first : {3, 100, 255}) {
        for (float sign : {1.0f, -1.0f}) {
            std::vector<float> x(256, 0.25f);
            x[static_cast<size_t>(first)] = 8.0f * sign;
            x[static_cast<size_t>(first == 3 ? 200 : 1)] = -8.0f * sign;  // same magnitude, other sign
            expect_same_bytes(x, "tie");
        }
    }
}

TEST_F(QuantizeActivationQ8K, ZeroBlocksAndExactHalves) {
    std::vector<float> x(768, 0.0f);  // block 0 all zeros
    x[256] = -127.0f;  // block 1: iscale 1, so these products are exact halves (ties to even)
    for (int j = 1; j < 256; ++j) x[static_cast<size_t>(256 + j)] = static_cast<float>(j % 9) - 4.5f;
    x[512] = 0.0f, x[600] = -0.0f, x[700] = 1.0f;  // block 2: signed zeros and one value
    expect_same_bytes(x, "zeros and halves");
}

TEST_F(QuantizeActivationQ8K, NonFiniteAndOverflowingScales) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> x(1024, 0.5f);
    x[10] = nan;                   // block 0: a NaN among finite values
    x[256 + 5] = inf;              // block 1: an infinite maximum
    x[256 + 9] = -inf;
    for (int j = 0; j < 256; ++j)  // block 2: denormal values, so −127/max overflows
        x[static_cast<size_t>(512 + j)] = (j % 2 ? -1.0f : 1.0f) * 1e-40f * static_cast<float>(j % 5);
    for (int j = 0; j < 256; ++j) x[static_cast<size_t>(768 + j)] = nan;  // block 3: only NaN
    expect_same_bytes(x, "non-finite");
}

}  // namespace
}  // namespace strata
