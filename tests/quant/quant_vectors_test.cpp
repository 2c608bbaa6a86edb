// Checks every registered quant format against ggml's own output, from the reference vectors in
// testdata/quant/<TYPE>.gguf and quant-next/<TYPE>.gguf (layout and generation: testdata/PROVENANCE.md, "quant/"). One test
// instance per file; a file whose type has no traits yet is skipped, so a newly registered
// format is picked up by adding its row to quant/traits.cpp.
//
// Per file: 4 rows × 512 values of `input`, ggml's `quantized` blocks and their `dequantized`
// floats, an `activation` vector with ggml's `activation_quantized` (in the vec_dot_type), the
// CPU `dot_ggml` of each row, and `quantized_noimatrix` (ggml's reference quantizer).

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "quant/traits.h"
#include "support/testdata.h"

namespace strata {
namespace {

std::string type_label(const std::string& path) { return std::filesystem::path(path).stem().string(); }

class QuantVectors : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        auto opened = GgufFile::open(GetParam());
        ASSERT_TRUE(opened) << opened.status().message();
        file_ = std::move(*opened);

        const std::string type_name = file_.get_string("testdata.type", "");
        const auto type = tensor_type_from_name(type_name);
        ASSERT_TRUE(type.has_value()) << "testdata.type '" << type_name << "' is not a known tensor type";
        traits_ = find_quant_traits(*type);
        if (!traits_) GTEST_SKIP() << "quant type " << type_name << " has no registered traits yet";
        type_ = *type;

        quantized_ = require("quantized", type_);
        input_ = require("input", TensorType::F32);
        dequantized_ = require("dequantized", TensorType::F32);
        activation_ = require("activation", TensorType::F32);
        dot_ggml_ = require("dot_ggml", TensorType::F32);
        activation_quantized_ = file_.tensor("activation_quantized");
        ASSERT_NE(activation_quantized_, nullptr);
        noimatrix_ = file_.tensor("quantized_noimatrix");  // absent for IQ types that need an imatrix
        ASSERT_FALSE(HasFatalFailure());

        n_ = static_cast<int64_t>(quantized_->ne[0]);
        rows_ = static_cast<int64_t>(quantized_->rows());
        row_bytes_ = tensor_type_info(type_)->row_bytes(static_cast<uint64_t>(n_));
        ASSERT_EQ(quantized_->n_bytes, row_bytes_ * static_cast<uint64_t>(rows_));
        ASSERT_EQ(input_->n_elements, static_cast<uint64_t>(n_ * rows_));
        ASSERT_EQ(activation_->n_elements, static_cast<uint64_t>(n_));
    }

    const GgufTensorInfo* require(const std::string& name, TensorType type) {
        const GgufTensorInfo* t = file_.tensor(name);
        EXPECT_NE(t, nullptr) << "tensor '" << name << "' missing";
        if (t) {
            EXPECT_EQ(t->type, type) << "tensor '" << name << "'";
        }
        return t;
    }
    const float* floats(const GgufTensorInfo* t) const {
        return reinterpret_cast<const float*>(file_.tensor_data(*t));
    }
    const uint8_t* row(const GgufTensorInfo* t, int64_t r) const {
        return file_.tensor_data(*t) + static_cast<uint64_t>(r) * row_bytes_;
    }

    GgufFile file_;
    const QuantTraits* traits_ = nullptr;
    TensorType type_ = TensorType::F32;
    const GgufTensorInfo* input_ = nullptr;
    const GgufTensorInfo* quantized_ = nullptr;
    const GgufTensorInfo* dequantized_ = nullptr;
    const GgufTensorInfo* activation_ = nullptr;
    const GgufTensorInfo* activation_quantized_ = nullptr;
    const GgufTensorInfo* dot_ggml_ = nullptr;
    const GgufTensorInfo* noimatrix_ = nullptr;
    int64_t n_ = 0;
    int64_t rows_ = 0;
    uint64_t row_bytes_ = 0;
};

TEST_P(QuantVectors, DequantizeIsBitExact) {
    std::vector<float> out(static_cast<size_t>(n_));
    for (int64_t r = 0; r < rows_; ++r) {
        traits_->dequantize_row(row(quantized_, r), out.data(), n_);
        const float* expected = floats(dequantized_) + r * n_;
        int mismatches = 0;
        for (int64_t i = 0; i < n_; ++i) {
            if (std::bit_cast<uint32_t>(out[i]) != std::bit_cast<uint32_t>(expected[i]) && mismatches++ < 5) {
                ADD_FAILURE() << "row " << r << " value " << i << ": got " << out[i] << ", ggml " << expected[i];
            }
        }
        EXPECT_EQ(mismatches, 0) << "row " << r;
    }
}

TEST_P(QuantVectors, ActivationQuantizationMatchesGgml) {
    // Our dot type must be ggml's vec_dot_type, or the dot products would not be comparable.
    ASSERT_EQ(activation_quantized_->type, traits_->dot_type)
        << "ggml uses " << tensor_type_name(activation_quantized_->type) << " activations";
    const QuantTraits* act = find_quant_traits(traits_->dot_type);
    ASSERT_NE(act, nullptr);
    ASSERT_NE(act->quantize_row, nullptr);
    std::vector<uint8_t> out(activation_quantized_->n_bytes);
    act->quantize_row(floats(activation_), out.data(), n_);
    const uint8_t* expected = file_.tensor_data(*activation_quantized_);
    EXPECT_EQ(std::memcmp(out.data(), expected, out.size()), 0)
        << "activation quantized to " << tensor_type_name(traits_->dot_type) << " differs from ggml";
}

TEST_P(QuantVectors, DotMatchesGgml) {
    ASSERT_NE(traits_->dot, nullptr);
    const float* dequantized = floats(dequantized_);
    const float* activation = floats(activation_);
    for (int64_t r = 0; r < rows_; ++r) {
        // ggml's SIMD kernels sum in their own order; PROVENANCE.md bounds that at 4e-8 of Σ|w·a|.
        double magnitude = 0.0;
        for (int64_t i = 0; i < n_; ++i) magnitude += std::fabs(double(dequantized[r * n_ + i]) * activation[i]);
        const float got = traits_->dot(row(quantized_, r), file_.tensor_data(*activation_quantized_), n_);
        EXPECT_NEAR(got, floats(dot_ggml_)[r], 1e-6 * magnitude) << "row " << r;
    }
}

TEST_P(QuantVectors, ReferenceQuantizerMatchesGgml) {
    if (!traits_->quantize_row) GTEST_SKIP() << tensor_type_name(type_) << " has no reference quantizer";
    if (!noimatrix_) GTEST_SKIP() << "no quantized_noimatrix in this file (ggml requires an imatrix)";
    ASSERT_EQ(noimatrix_->type, type_);
    const QuantTraits& traits = *traits_;
    const uint64_t block_bytes = tensor_type_info(type_)->block_bytes;
    std::vector<uint8_t> out(row_bytes_);
    for (int64_t r = 0; r < rows_; ++r) {
        traits.quantize_row(floats(input_) + r * n_, out.data(), n_);
        const uint8_t* expected = row(noimatrix_, r);
        for (uint64_t off = 0; off < row_bytes_; off += block_bytes) {
            EXPECT_EQ(std::memcmp(out.data() + off, expected + off, block_bytes), 0)
                << "row " << r << " block " << off / block_bytes << " differs from ggml's quantize_row_ref";
        }
    }
}

std::vector<std::string> quant_files() { return test::quant_vector_files(); }

INSTANTIATE_TEST_SUITE_P(Ggml, QuantVectors, ::testing::ValuesIn(quant_files()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return type_label(p.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(QuantVectors);

}  // namespace
}  // namespace strata
