// The IQ dot products (quant/iq1.h .. iq4.h) against their own dequantizers, on random blocks.
// quant_vectors_test.cpp checks both against ggml, but its 8 rows of blocks touch only a few
// hundred grid entries and scale codes; here every bit pattern is fair game, so a dot kernel
// that decodes an index, sign or scale bit differently from the dequantizer is caught.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "quant/iq1.h"
#include "quant/legacy.h"
#include "quant/q8_k.h"
#include "quant/traits.h"

namespace strata {
namespace {

constexpr int64_t kRowValues = 512;
constexpr int kRows = 128;  // 128 rows · 16 groups of 32: every 11-bit IQ1 index is drawn ~4 times

// Random weight blocks with a finite super-block scale: all other bit patterns are valid.
std::vector<uint8_t> random_weights(TensorType type, std::mt19937& rng) {
    const TensorTypeInfo& info = *tensor_type_info(type);
    std::vector<uint8_t> row(info.row_bytes(kRowValues));
    for (auto& b : row) b = static_cast<uint8_t>(rng());
    const uint16_t d = fp32_to_fp16(std::uniform_real_distribution<float>(0.05f, 2.0f)(rng));
    for (size_t off = 0; off < row.size(); off += info.block_bytes) {
        if (type == TensorType::IQ1_M) {
            // The fp16 scale is the top nibbles of the four scale words (BlockIq1M).
            auto* b = reinterpret_cast<BlockIq1M*>(row.data() + off);
            for (int k = 0; k < 4; ++k) {
                uint16_t word;
                std::memcpy(&word, b->scales + 2 * k, 2);
                word = static_cast<uint16_t>((word & 0x0FFF) | (((d >> (4 * k)) & 0xF) << 12));
                std::memcpy(b->scales + 2 * k, &word, 2);
            }
        } else {
            std::memcpy(row.data() + off, &d, sizeof(d));  // every other IQ block starts with fp16 d
        }
    }
    return row;
}

// A random activation row in the dot type, built directly so that every int8 quant occurs.
std::vector<uint8_t> random_activation(TensorType dot_type, std::mt19937& rng) {
    std::uniform_int_distribution<int> quant(-127, 127);
    if (dot_type == TensorType::Q8_K) {
        std::vector<BlockQ8_K> a(kRowValues / 256);
        for (auto& b : a) {
            b.d = 0.01f;
            for (auto& q : b.qs) q = static_cast<int8_t>(quant(rng));
            for (int g = 0; g < 16; ++g) {
                int sum = 0;
                for (int j = 0; j < 16; ++j) sum += b.qs[16 * g + j];
                b.bsums[g] = static_cast<int16_t>(sum);
            }
        }
        std::vector<uint8_t> bytes(a.size() * sizeof(BlockQ8_K));
        std::memcpy(bytes.data(), a.data(), bytes.size());
        return bytes;
    }
    EXPECT_EQ(dot_type, TensorType::Q8_0);
    std::vector<BlockQ8_0> a(kRowValues / 32);
    for (auto& b : a) {
        b.d = fp32_to_fp16(0.01f);
        for (auto& q : b.qs) q = static_cast<int8_t>(quant(rng));
    }
    std::vector<uint8_t> bytes(a.size() * sizeof(BlockQ8_0));
    std::memcpy(bytes.data(), a.data(), bytes.size());
    return bytes;
}

class IqDot : public ::testing::TestWithParam<TensorType> {};

TEST_P(IqDot, EqualsDotOfDequantizedRows) {
    const QuantTraits& q = quant_traits(GetParam());
    const QuantTraits& act = quant_traits(q.dot_type);
    std::mt19937 rng(1234 + static_cast<unsigned>(GetParam()));
    std::vector<float> w(kRowValues), a(kRowValues);
    for (int r = 0; r < kRows; ++r) {
        const std::vector<uint8_t> weights = random_weights(GetParam(), rng);
        const std::vector<uint8_t> activation = random_activation(q.dot_type, rng);
        q.dequantize_row(weights.data(), w.data(), kRowValues);
        act.dequantize_row(activation.data(), a.data(), kRowValues);
        double expected = 0.0, magnitude = 0.0;
        for (int64_t i = 0; i < kRowValues; ++i) {
            expected += double(w[i]) * a[i];
            magnitude += std::fabs(double(w[i]) * a[i]);
        }
        // Float rounding of per-block partial sums only; ggml's own kernels agree to 4e-8 of Σ|w·a|.
        ASSERT_NEAR(q.dot(weights.data(), activation.data(), kRowValues), expected, 1e-6 * magnitude) << "row " << r;
    }
}

INSTANTIATE_TEST_SUITE_P(Iq, IqDot,
                         ::testing::Values(TensorType::IQ1_S, TensorType::IQ1_M, TensorType::IQ2_XXS,
                                           TensorType::IQ2_XS, TensorType::IQ2_S, TensorType::IQ3_XXS,
                                           TensorType::IQ3_S, TensorType::IQ4_NL, TensorType::IQ4_XS),
                         [](const ::testing::TestParamInfo<TensorType>& p) {
                             return std::string(tensor_type_name(p.param));
                         });

// One hand-built block per layout detail that the random test cannot see (it only compares
// the two decoders with each other): the group scale formula and the position of the values.
TEST(IqLayout, Iq2xxsFirstGroupOfZeroIndexIsAllEightsScaledByOneEighth) {
    // Index 0 is the all-0x08 point; scale code 0 means d·½·¼, signs 0 mean all positive.
    std::vector<uint8_t> block(66, 0);
    const uint16_t d = fp32_to_fp16(1.0f);
    std::memcpy(block.data(), &d, 2);
    std::vector<float> out(256);
    quant_traits(TensorType::IQ2_XXS).dequantize_row(block.data(), out.data(), 256);
    for (float v : out) EXPECT_EQ(v, 1.0f);  // 8 · ½ · ¼
}

TEST(IqLayout, Iq1sDeltaSignAndScaleComeFromTheTopBitsOfQh) {
    BlockIq1S b{};
    b.d = fp32_to_fp16(1.0f);
    b.qh[0] = 0x8000 | (2 << 12);  // δ = −⅛, scale code 2 → dl = 5; index 0 is all −1
    std::vector<float> out(256);
    dequantize_row_iq1_s(&b, out.data(), 256);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], 5.0f * (-1.0f - 0.125f)) << j;
    for (int j = 32; j < 256; ++j) EXPECT_EQ(out[j], 1.0f * (-1.0f + 0.125f)) << j;
}

}  // namespace
}  // namespace strata
