// The parts of NVFP4, Q1_0 and Q2_0 that ggml's reference vectors (quant_vectors_test.cpp) do not
// reach: every E4M3 scale byte, the encoder's saturation and rounding edges, and Q2_0's fourth
// code (+2d), which ggml's quantizer never writes but a file may hold. The expected values come
// from the formats' definitions (PROVENANCE.md of the test data, "The three newer types").

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/fp16.h"
#include "quant/legacy.h"
#include "quant/nvfp4.h"
#include "quant/q1_0.h"
#include "quant/q2_0.h"

namespace strata {
namespace {

// Unsigned E4M3 by its definition, in double: exponent 0 subnormal m·2^−9, else (1 + m/8)·2^(e−7);
// 0x7F (NaN) reads as 0 in ggml, and bit 7 (no sign in an unsigned format) is ignored by ggml's
// decoder except that 0xFF is not 0x7F.
double e4m3_value(int byte) {
    if (byte == 0x7F) return 0.0;
    const int e = (byte >> 3) & 0xF, m = byte & 7;
    return e == 0 ? std::ldexp(m, -9) : std::ldexp(1.0 + m / 8.0, e - 7);
}

TEST(Nvfp4Scale, EveryByteIsHalfItsE4M3Value) {
    for (int b = 0; b < 256; ++b) {
        EXPECT_EQ(static_cast<double>(ue4m3_half(static_cast<uint8_t>(b))), e4m3_value(b) / 2) << "byte " << b;
    }
}

TEST(Nvfp4Scale, EncoderGivesBackEveryByteItCanProduce) {
    for (int b = 1; b < 0x7F; ++b) {
        const float v = static_cast<float>(e4m3_value(b));
        // Exponent 15 is written as 0x7E whatever the mantissa (ggml's encoder).
        const int want = b >= 0x78 ? 0x7E : b;
        EXPECT_EQ(fp32_to_ue4m3(v), want) << "value " << v;
    }
}

TEST(Nvfp4Scale, EncoderEdges) {
    EXPECT_EQ(fp32_to_ue4m3(0.0f), 0);
    EXPECT_EQ(fp32_to_ue4m3(-1.0f), 0);
    EXPECT_EQ(fp32_to_ue4m3(std::numeric_limits<float>::quiet_NaN()), 0);
    EXPECT_EQ(fp32_to_ue4m3(1e30f), 0x7E);
    EXPECT_EQ(fp32_to_ue4m3(std::numeric_limits<float>::infinity()), 0x7E);
    EXPECT_EQ(fp32_to_ue4m3(240.0f), 0x77);  // the largest below exponent 15
    EXPECT_EQ(fp32_to_ue4m3(248.0f), 0x7E);  // rounds up into exponent 15
    // Subnormals round half up: 2^−10 is half of the smallest step, 2^−10 less a bit rounds to 0.
    EXPECT_EQ(fp32_to_ue4m3(0x1p-10f), 1);
    EXPECT_EQ(fp32_to_ue4m3(0x1.fp-11f), 0);
    EXPECT_EQ(fp32_to_ue4m3(7.5f * 0x1p-9f), 7);  // 8·2^−9 = 2^−6 would be exponent 1: kept subnormal
    // Normals: the fourth mantissa bit rounds half up, carrying into the exponent.
    EXPECT_EQ(fp32_to_ue4m3(1.0625f), (7 << 3) | 1);
    EXPECT_EQ(fp32_to_ue4m3(1.9375f), 8 << 3);
}

TEST(Nvfp4, QuantizerSaturatesLargeBlocksAtTheLargestScale) {
    std::vector<float> x(64, 0.0f);
    x[0] = 1e6f;   // amax / 6 far above 448: the scale saturates at 448, the value at 6·448
    x[17] = -3.0f;
    BlockNvfp4 b{};
    quantize_row_nvfp4(x.data(), &b, 64);
    EXPECT_EQ(b.d[0], 0x7E);
    std::vector<float> y(64);
    dequantize_row_nvfp4(&b, y.data(), 64);
    EXPECT_EQ(y[0], 6.0f * 448.0f);
    EXPECT_EQ(y[17], -3.0f);  // sub-block 1: amax 3, scale 0.5, the largest code: −6·0.5 exactly
    for (int j = 1; j < 64; ++j) {
        if (j == 17) continue;
        EXPECT_EQ(y[j], 0.0f) << j;
    }
}

TEST(Q2_0, TheFourthCodeIsTwiceTheScaleInDequantizationAndDot) {
    BlockQ2_0 w{};
    w.d = fp32_to_fp16(0.5f);
    std::memset(w.qs, 0xFF, sizeof(w.qs));  // every code 3: +2d = 1.0
    std::vector<float> y(64);
    dequantize_row_q2_0(&w, y.data(), 64);
    for (float v : y) EXPECT_EQ(v, 1.0f);
    BlockQ8_0 a[2];
    for (BlockQ8_0& b : a) {
        b.d = fp32_to_fp16(1.0f);
        for (int8_t& q : b.qs) q = 3;
    }
    EXPECT_EQ(dot_q2_0_q8_0(&w, a, 64), 64 * 3 * 1.0f);
}

TEST(Q1_0, SignsAndMeanMagnitude) {
    std::vector<float> x(128);
    for (int j = 0; j < 128; ++j) x[j] = (j % 3 == 0 ? -1.0f : 1.0f) * 0.25f;
    x[6] = -0.0f;  // −0 counts as non-negative (x ≥ 0)
    BlockQ1_0 b{};
    quantize_row_q1_0(x.data(), &b, 128);
    EXPECT_EQ(fp16_to_fp32(b.d), 0.25f - 0.25f / 128);  // one zero among 128 magnitudes of 0.25
    std::vector<float> y(128);
    dequantize_row_q1_0(&b, y.data(), 128);
    for (int j = 0; j < 128; ++j) EXPECT_EQ(std::signbit(y[j]), j % 3 == 0 && j != 6) << j;
}

}  // namespace
}  // namespace strata
