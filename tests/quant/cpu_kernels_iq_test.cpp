// The IQ dot kernels (quant/cpu/dot_iq_<level>.cpp) against ggml and against the scalar
// references, at every SIMD level the CPU supports (levels it lacks are skipped with a message):
//   - GgmlVectors: `dot_ggml` of testdata/quant/<TYPE>.gguf within 1e-6·Σ|w·a| (PROVENANCE.md);
//   - RandomRows: random block bytes with a sane fp16 scale (every bit pattern of an IQ block is
//     a valid encoding), at lengths from one block to 4096+, against the scalar reference within
//     the same bound — with activations quantized from gaussians, and with every quant at ±127
//     and half the weight bytes 0xFF (top scale codes), the worst case for the kernels' int16
//     pair sums.
// cpu_kernels_test.cpp covers every table row generically; this file adds what is particular to
// IQ: IQ1_M's scale hidden in the scale words, the bsums-based IQ1 offset (real Q8_K activations,
// not hand-filled ones), and the saturation bounds. To add an IQ type, list it in kIqTypes.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/file.h"
#include "core/fp16.h"
#include "gguf/reader.h"
#include "quant/cpu/dot_kernels.h"
#include "quant/iq1.h"
#include "quant/traits.h"
#include "support/testdata.h"

namespace strata {
namespace {

constexpr TensorType kIqTypes[] = {TensorType::IQ1_S,  TensorType::IQ1_M,   TensorType::IQ2_XXS,
                                   TensorType::IQ2_XS, TensorType::IQ2_S,   TensorType::IQ3_XXS,
                                   TensorType::IQ3_S,  TensorType::IQ4_NL,  TensorType::IQ4_XS};

struct IqCase {
    TensorType type;
    SimdLevel level;
};

void PrintTo(const IqCase& c, std::ostream* os) { *os << tensor_type_name(c.type) << " at " << simd_level_name(c.level); }

std::vector<IqCase> iq_cases() {
    std::vector<IqCase> cases;
    for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
        for (TensorType t : kIqTypes) cases.push_back({t, level});
    }
    return cases;
}

// Σ|w·a| over a row pair, the scale of the allowed summation error.
double magnitude(const QuantTraits& q, const void* weights, const void* activation, int64_t n) {
    std::vector<float> w(static_cast<size_t>(n)), a(static_cast<size_t>(n));
    q.dequantize_row(weights, w.data(), n);
    quant_traits(q.dot_type).dequantize_row(activation, a.data(), n);
    double m = 0.0;
    for (int64_t i = 0; i < n; ++i) m += std::fabs(double(w[i]) * a[i]);
    return m;
}

// Writes the fp16 super-block scale d into a block of `type` (the first field, except for
// IQ1_M, whose d is the top nibbles of its four scale words).
void set_block_scale(TensorType type, uint8_t* block, uint16_t d) {
    if (type != TensorType::IQ1_M) {
        std::memcpy(block, &d, sizeof(d));
        return;
    }
    auto* b = reinterpret_cast<BlockIq1M*>(block);
    for (int k = 0; k < 4; ++k) {
        uint16_t word;
        std::memcpy(&word, b->scales + 2 * k, 2);
        word = static_cast<uint16_t>((word & 0x0FFF) | (((d >> (4 * k)) & 0xF) << 12));
        std::memcpy(b->scales + 2 * k, &word, 2);
    }
}

// Random block bytes with a random finite scale per block. `saturate`: half the bytes are 0xFF,
// which sets scale codes, grid indices and signs to their largest values.
std::vector<uint8_t> random_weights(TensorType type, int64_t n, bool saturate, std::mt19937& rng) {
    const TensorTypeInfo& info = *tensor_type_info(type);
    std::vector<uint8_t> row(info.row_bytes(static_cast<uint64_t>(n)));
    for (auto& b : row) b = (saturate && (rng() & 1)) ? 0xFF : static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> scale(0.05f, 2.0f);
    for (size_t off = 0; off < row.size(); off += info.block_bytes) {
        set_block_scale(type, row.data() + off, fp32_to_fp16((rng() & 1 ? 1.0f : -1.0f) * scale(rng)));
    }
    return row;
}

// An activation row quantized by the dot type's reference quantizer (so Q8_K's bsums are real).
// `full_scale`: values ±1, which quantize to ±127 everywhere.
std::vector<uint8_t> random_activation(TensorType dot_type, int64_t n, bool full_scale, std::mt19937& rng) {
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = full_scale ? (rng() & 1 ? 1.0f : -1.0f) : gauss(rng);
    std::vector<uint8_t> row(tensor_type_info(dot_type)->row_bytes(static_cast<uint64_t>(n)));
    quant_traits(dot_type).quantize_row(x.data(), row.data(), n);
    return row;
}

class IqKernel : public ::testing::TestWithParam<IqCase> {
protected:
    void SetUp() override {
        const IqCase c = GetParam();
        if (cpu_simd_level() < c.level) {
            GTEST_SKIP() << "this CPU does not support " << simd_level_name(c.level) << " (it has "
                         << simd_level_name(cpu_simd_level()) << ")";
        }
        kernel_ = cpu_dot_kernel_exact(c.type, c.level);
        if (!kernel_) GTEST_SKIP() << "no " << simd_level_name(c.level) << " kernel for " << tensor_type_name(c.type);
        traits_ = &quant_traits(c.type);
    }

    // Compares the kernel with the scalar reference on `rows` random rows of `n` values.
    void check_random_rows(int64_t n, int rows, bool extreme, std::mt19937& rng) {
        for (int r = 0; r < rows; ++r) {
            const std::vector<uint8_t> w = random_weights(GetParam().type, n, extreme, rng);
            const std::vector<uint8_t> a = random_activation(traits_->dot_type, n, extreme, rng);
            const float expected = traits_->dot(w.data(), a.data(), n);
            const float got = kernel_(w.data(), a.data(), n);
            ASSERT_NEAR(got, expected, 1e-6 * magnitude(*traits_, w.data(), a.data(), n))
                << "n = " << n << ", row " << r << (extreme ? " (saturated)" : "");
        }
    }

    DotFn kernel_ = nullptr;
    const QuantTraits* traits_ = nullptr;
};

TEST_P(IqKernel, GgmlVectors) {
    const std::string path = test::quant_vector_path(std::string(tensor_type_name(GetParam().type)));
    STRATA_SKIP_IF_MISSING(path);
    auto opened = GgufFile::open(path);
    ASSERT_TRUE(opened) << opened.status().message();
    const GgufFile& file = *opened;
    const GgufTensorInfo* quantized = file.tensor("quantized");
    const GgufTensorInfo* activation = file.tensor("activation_quantized");
    const GgufTensorInfo* dot_ggml = file.tensor("dot_ggml");
    ASSERT_TRUE(quantized && activation && dot_ggml) << path << " lacks quantized/activation_quantized/dot_ggml";
    ASSERT_EQ(quantized->type, GetParam().type);
    ASSERT_EQ(activation->type, traits_->dot_type);

    const auto n = static_cast<int64_t>(quantized->ne[0]);
    const uint64_t row_bytes = tensor_type_info(GetParam().type)->row_bytes(static_cast<uint64_t>(n));
    const uint8_t* act = file.tensor_data(*activation);
    const auto* expected = reinterpret_cast<const float*>(file.tensor_data(*dot_ggml));
    for (int64_t r = 0; r < static_cast<int64_t>(quantized->rows()); ++r) {
        const uint8_t* w = file.tensor_data(*quantized) + static_cast<uint64_t>(r) * row_bytes;
        EXPECT_NEAR(kernel_(w, act, n), expected[r], 1e-6 * magnitude(*traits_, w, act, n)) << "row " << r;
    }
}

TEST_P(IqKernel, RandomRows) {
    std::mt19937 rng(4321 + 16 * static_cast<unsigned>(GetParam().type) + static_cast<unsigned>(GetParam().level));
    // One block, an odd block count, and a realistic row length (and one past it).
    const bool small_blocks = GetParam().type == TensorType::IQ4_NL;
    const std::vector<int64_t> lengths = small_blocks ? std::vector<int64_t>{32, 96, 256, 4096, 4128}
                                                      : std::vector<int64_t>{256, 768, 4096, 4352};
    for (int64_t n : lengths) {
        check_random_rows(n, n <= 768 ? 64 : 8, false, rng);
        if (HasFatalFailure()) return;
    }
}

TEST_P(IqKernel, SaturatedRowsMatchReference) {
    std::mt19937 rng(8765 + 16 * static_cast<unsigned>(GetParam().type) + static_cast<unsigned>(GetParam().level));
    check_random_rows(GetParam().type == TensorType::IQ4_NL ? 96 : 768, 64, true, rng);
}

INSTANTIATE_TEST_SUITE_P(Iq, IqKernel, ::testing::ValuesIn(iq_cases()), [](const ::testing::TestParamInfo<IqCase>& p) {
    return std::string(tensor_type_name(p.param.type)) + "_" + std::string(simd_level_name(p.param.level));
});

}  // namespace
}  // namespace strata
