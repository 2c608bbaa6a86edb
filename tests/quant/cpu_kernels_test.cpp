// Every optimised CPU dot kernel (quant/cpu/dot_kernels.h) against the scalar reference of its
// type, at every SIMD level the CPU supports (levels it lacks are skipped with a message):
//   - OutsideVectors: ggml's `dot_ggml` in testdata/quant/<TYPE>.gguf (PROVENANCE.md), within
//     1e-6·Σ|w·a| of the dequantized weights w and activation a, as quant_vectors_test does;
//   - QuantizedRows / RandomBlocks: random rows, quantized by the reference quantizer or filled
//     with random bytes and sane scales, at several lengths (one block up to 4096+), against the
//     scalar reference within the same relative bound.
// Cases come from the kernel tables, so a kernel added to dot_table_<level>.cpp is tested
// without touching this file. A type's random-byte rows need the offsets of its float scales
// (kScaleFields below); a type missing there is still tested through its quantizer.

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
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
#include "quant/iq2.h"
#include "quant/iq3.h"
#include "quant/iq4.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"
#include "quant/mxfp4.h"
#include "quant/q1_0.h"
#include "quant/q2_0.h"
#include "quant/traits.h"
#include "support/testdata.h"

namespace strata {
namespace {

struct KernelCase {
    TensorType type;
    SimdLevel level;
};

void PrintTo(const KernelCase& c, std::ostream* os) {
    *os << tensor_type_name(c.type) << " at " << simd_level_name(c.level);
}

std::string case_name(const ::testing::TestParamInfo<KernelCase>& info) {
    return std::string(tensor_type_name(info.param.type)) + "_" + std::string(simd_level_name(info.param.level));
}

std::vector<KernelCase> kernel_cases() {
    std::vector<KernelCase> cases;
    for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
        size_t count = 0;
        const DotKernel* table = level == SimdLevel::Avx2 ? avx2_dot_kernels(&count) : avx512_dot_kernels(&count);
        for (size_t i = 0; i < count; ++i) {
            if (table[i].dot) cases.push_back({table[i].type, level});
        }
    }
    return cases;
}

// Where a block keeps its fp16 scales (every other byte may be random). MXFP4's one-byte
// exponent and NVFP4's four E4M3 scale bytes are handled separately.
struct ScaleFields {
    TensorType type;
    size_t offsets[2];
    int count;
};
constexpr ScaleFields kScaleFields[] = {
    {TensorType::Q4_0, {offsetof(BlockQ4_0, d)}, 1},
    {TensorType::Q5_0, {offsetof(BlockQ5_0, d)}, 1},
    {TensorType::Q8_0, {offsetof(BlockQ8_0, d)}, 1},
    {TensorType::Q2_K, {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)}, 2},
    {TensorType::Q3_K, {offsetof(BlockQ3_K, d)}, 1},
    {TensorType::Q4_K, {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)}, 2},
    {TensorType::Q5_K, {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)}, 2},
    {TensorType::Q6_K, {offsetof(BlockQ6_K, d)}, 1},
    {TensorType::IQ2_XXS, {offsetof(BlockIq2Xxs, d)}, 1},
    {TensorType::IQ2_XS, {offsetof(BlockIq2Xs, d)}, 1},
    {TensorType::IQ2_S, {offsetof(BlockIq2S, d)}, 1},
    {TensorType::IQ3_XXS, {offsetof(BlockIq3Xxs, d)}, 1},
    {TensorType::IQ3_S, {offsetof(BlockIq3S, d)}, 1},
    {TensorType::IQ1_S, {offsetof(BlockIq1S, d)}, 1},
    {TensorType::IQ4_NL, {offsetof(BlockIq4Nl, d)}, 1},
    {TensorType::IQ4_XS, {offsetof(BlockIq4Xs, d)}, 1},
    {TensorType::Q1_0, {offsetof(BlockQ1_0, d)}, 1},
    {TensorType::Q2_0, {offsetof(BlockQ2_0, d)}, 1},
};

const ScaleFields* scale_fields(TensorType type) {
    for (const ScaleFields& f : kScaleFields) {
        if (f.type == type) return &f;
    }
    return nullptr;
}

// Σ|w·a| over the row: the scale of the rounding differences two summation orders may have.
double magnitude(const QuantTraits& traits, const void* weights, const void* activation, int64_t n) {
    std::vector<float> w(static_cast<size_t>(n)), a(static_cast<size_t>(n));
    traits.dequantize_row(weights, w.data(), n);
    quant_traits(traits.dot_type).dequantize_row(activation, a.data(), n);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += std::fabs(double(w[i]) * a[i]);
    return sum;
}

class CpuKernel : public ::testing::TestWithParam<KernelCase> {
protected:
    void SetUp() override {
        const KernelCase& c = GetParam();
        if (cpu_simd_level() < c.level) {
            GTEST_SKIP() << "this CPU does not support " << simd_level_name(c.level) << " (it has "
                         << simd_level_name(cpu_simd_level()) << ")";
        }
        traits_ = &quant_traits(c.type);
        kernel_ = cpu_dot_kernel_exact(c.type, c.level);
        ASSERT_NE(kernel_, nullptr);
        ASSERT_NE(traits_->dot, nullptr) << "a kernel without a scalar reference to check it against";
        block_size_ = tensor_type_info(c.type)->block_size;
    }

    // Row lengths: one block, a few (odd counts reach the kernels' tails), 4096 and past it.
    std::vector<int64_t> lengths() const {
        const int64_t b = block_size_;
        return {b, 3 * b, 7 * b, 4096, 4096 + b, 11008 / b * b};
    }

    std::vector<uint8_t> random_activation(int64_t n, std::mt19937& rng) const {
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = normal(rng);
        std::vector<uint8_t> out(tensor_type_info(traits_->dot_type)->row_bytes(static_cast<uint64_t>(n)));
        quant_traits(traits_->dot_type).quantize_row(x.data(), out.data(), n);
        return out;
    }

    void expect_matches_reference(const void* weights, const void* activation, int64_t n, const std::string& what) {
        const float want = traits_->dot(weights, activation, n);
        const float got = kernel_(weights, activation, n);
        EXPECT_NEAR(got, want, 1e-6 * magnitude(*traits_, weights, activation, n)) << what << ", n = " << n;
    }

    const QuantTraits* traits_ = nullptr;
    DotFn kernel_ = nullptr;
    int64_t block_size_ = 0;
};

TEST_P(CpuKernel, OutsideVectors) {
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
    const int64_t n = static_cast<int64_t>(quantized->ne[0]);
    const uint64_t row_bytes = tensor_type_info(quantized->type)->row_bytes(static_cast<uint64_t>(n));
    const auto* expected = reinterpret_cast<const float*>(file.tensor_data(*dot_ggml));
    for (int64_t r = 0; r < static_cast<int64_t>(quantized->rows()); ++r) {
        const uint8_t* row = file.tensor_data(*quantized) + static_cast<uint64_t>(r) * row_bytes;
        const uint8_t* act = file.tensor_data(*activation);
        const float got = kernel_(row, act, n);
        EXPECT_NEAR(got, expected[r], 1e-6 * magnitude(*traits_, row, act, n)) << "row " << r;
    }
}

TEST_P(CpuKernel, QuantizedRows) {
    if (!traits_->quantize_row) GTEST_SKIP() << tensor_type_name(GetParam().type) << " has no reference quantizer";
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t n : lengths()) {
        for (int trial = 0; trial < 4; ++trial) {
            // Trial 1 shifts the weights so minimums and offsets matter; trial 3 adds outliers.
            std::vector<float> x(static_cast<size_t>(n));
            for (float& v : x) v = normal(rng) + (trial == 1 ? 2.0f : 0.0f);
            if (trial == 3) {
                for (int64_t i = 0; i < n; i += 97) x[static_cast<size_t>(i)] *= 20.0f;
            }
            std::vector<uint8_t> w(tensor_type_info(GetParam().type)->row_bytes(static_cast<uint64_t>(n)));
            traits_->quantize_row(x.data(), w.data(), n);
            expect_matches_reference(w.data(), random_activation(n, rng).data(), n,
                                     "quantized row, trial " + std::to_string(trial));
        }
    }
}

TEST_P(CpuKernel, RandomBlocks) {
    const TensorType type = GetParam().type;
    const ScaleFields* fields = scale_fields(type);
    if (!fields && type != TensorType::MXFP4 && type != TensorType::NVFP4) {
        GTEST_SKIP() << "no scale offsets for " << tensor_type_name(type) << " in kScaleFields";
    }
    const uint32_t block_bytes = tensor_type_info(type)->block_bytes;
    std::mt19937 rng(99);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
    for (int64_t n : lengths()) {
        for (int trial = 0; trial < 4; ++trial) {
            std::vector<uint8_t> w(tensor_type_info(type)->row_bytes(static_cast<uint64_t>(n)));
            for (uint8_t& b : w) b = static_cast<uint8_t>(byte(rng));
            for (size_t off = 0; off < w.size(); off += block_bytes) {
                if (type == TensorType::MXFP4) {
                    w[off] = static_cast<uint8_t>(110 + byte(rng) % 30);  // 2^-17 .. 2^12
                    continue;
                }
                if (type == TensorType::NVFP4) continue;  // every scale byte is a finite E4M3 value
                for (int f = 0; f < fields->count; ++f) {
                    const uint16_t h = fp32_to_fp16(scale(rng));
                    std::memcpy(&w[off + fields->offsets[f]], &h, sizeof(h));
                }
            }
            expect_matches_reference(w.data(), random_activation(n, rng).data(), n,
                                     "random blocks, trial " + std::to_string(trial));
        }
    }
}

TEST_P(CpuKernel, DispatchPrefersTheBestLevel) {
    // cpu_dot_kernel at exactly this level returns this level's kernel.
    EXPECT_EQ(cpu_dot_kernel(GetParam().type, GetParam().level), kernel_);
}

INSTANTIATE_TEST_SUITE_P(Kernels, CpuKernel, ::testing::ValuesIn(kernel_cases()), case_name);

}  // namespace
}  // namespace strata
