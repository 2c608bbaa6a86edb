// Parts of weight tensors for a tensor split (model/weight_slices.h): row, element and matrix
// views read the same bytes as the whole; a column part of a quantized matrix dequantizes to the
// same values as those columns of the whole (ggml's reference dequantizers: quant/traits.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "model/weight_slices.h"
#include "quant/traits.h"

namespace strata {
namespace {

// rows × n values quantized to `type` with the reference quantizer.
struct Matrix {
    std::vector<uint8_t> bytes;
    Weight w;
};
Matrix quantized_matrix(TensorType type, int64_t n, int64_t rows, int64_t stack = 1) {
    Matrix m;
    const TensorTypeInfo* info = tensor_type_info(type);
    const uint64_t row_bytes = info->row_bytes(static_cast<uint64_t>(n));
    m.bytes.resize(row_bytes * static_cast<uint64_t>(rows * stack));
    std::mt19937 rng(7);
    std::normal_distribution<float> dist;
    std::vector<float> row(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows * stack; ++r) {
        for (float& v : row) v = dist(rng);
        if (type == TensorType::F32) std::memcpy(m.bytes.data() + row_bytes * r, row.data(), row_bytes);
        else quant_traits(type).quantize_row(row.data(), m.bytes.data() + row_bytes * r, n);
    }
    m.w.data = m.bytes.data();
    m.w.type = type;
    m.w.ne[0] = n, m.w.ne[1] = rows, m.w.ne[2] = stack;
    m.w.row_bytes = row_bytes;
    return m;
}

std::vector<float> dequantized_row(const Weight& w, int64_t r) {
    std::vector<float> out(static_cast<size_t>(w.ne[0]));
    quant_traits(w.type).dequantize_row(w.row(r), out.data(), w.ne[0]);
    return out;
}

TEST(WeightSlices, ColumnsDequantizeToTheWholeRowsColumns) {
    for (TensorType type : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0, TensorType::F32}) {
        const Matrix m = quantized_matrix(type, 1024, 6);
        std::vector<uint8_t> storage;
        auto part = weight_columns(m.w, 512, 256, storage);
        ASSERT_TRUE(part) << part.status().message();
        EXPECT_EQ(part->ne[0], 256);
        EXPECT_EQ(part->ne[1], 6);
        for (int64_t r = 0; r < 6; ++r) {
            const std::vector<float> whole = dequantized_row(m.w, r), mine = dequantized_row(*part, r);
            for (int64_t i = 0; i < 256; ++i) ASSERT_EQ(mine[i], whole[512 + i]) << tensor_type_name(type) << " row " << r;
        }
    }
}

TEST(WeightSlices, RowsMatricesAndElementsAreViews) {
    const Matrix m = quantized_matrix(TensorType::Q4_K, 256, 8);
    auto rows = weight_rows(m.w, 2, 3);
    ASSERT_TRUE(rows);
    EXPECT_EQ(rows->data, m.w.row(2));
    EXPECT_EQ(rows->ne[1], 3);
    EXPECT_EQ(dequantized_row(*rows, 1), dequantized_row(m.w, 3));

    const Matrix experts = quantized_matrix(TensorType::Q8_0, 64, 4, 6);
    auto some = weight_matrices(experts.w, 4, 2);
    ASSERT_TRUE(some);
    EXPECT_EQ(some->data, experts.w.matrix(4));
    EXPECT_EQ(some->ne[2], 2);
    EXPECT_EQ(some->matrix(1), experts.w.matrix(5));

    const Matrix bias = quantized_matrix(TensorType::F32, 12, 1);
    auto part = weight_elements(bias.w, 4, 4);
    ASSERT_TRUE(part);
    EXPECT_EQ(part->f32()[0], bias.w.f32()[4]);
    EXPECT_EQ(part->ne[0], 4);
    EXPECT_EQ(part->row_bytes, 16u);
}

TEST(WeightSlices, BadPartsAreRefused) {
    const Matrix m = quantized_matrix(TensorType::Q4_K, 512, 4);
    std::vector<uint8_t> storage;
    auto misaligned = weight_columns(m.w, 128, 256, storage);
    ASSERT_FALSE(misaligned);
    EXPECT_NE(misaligned.status().message().find("256-value blocks of Q4_K"), std::string::npos)
        << misaligned.status().message();
    EXPECT_FALSE(weight_columns(m.w, 256, 512, storage));  // past the row
    EXPECT_FALSE(weight_rows(m.w, 3, 2));                  // past the last row
    EXPECT_FALSE(weight_rows(m.w, 0, 0));                  // empty
    EXPECT_FALSE(weight_matrices(m.w, 0, 2));              // not a stack of two
    EXPECT_FALSE(weight_elements(m.w, 0, 4));              // not an F32 vector
    EXPECT_FALSE(weight_rows(Weight{}, 0, 1));             // absent
}

}  // namespace
}  // namespace strata
