// Consistency of the quant traits table (quant/traits.cpp) with the GGUF layout table
// (gguf/tensor_type.cpp) and with the block structs of each format file. Numeric correctness of
// each format against ggml is quant_vectors_test.cpp.

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "quant/float_types.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"
#include "quant/mxfp4.h"
#include "quant/nvfp4.h"
#include "quant/q1_0.h"
#include "quant/q2_0.h"
#include "quant/q8_k.h"
#include "quant/ternary.h"
#include "quant/traits.h"

namespace strata {
namespace {

std::vector<TensorType> registered_types() {
    size_t count = 0;
    const TensorTypeInfo* types = all_tensor_types(&count);
    std::vector<TensorType> out;
    for (size_t i = 0; i < count; ++i) {
        if (find_quant_traits(types[i].type)) out.push_back(types[i].type);
    }
    return out;
}

TEST(QuantTraits, EveryWeightFormatOfTheEngineIsRegistered) {
    for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
                         TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q8_1, TensorType::Q2_K,
                         TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::Q8_K,
                         TensorType::MXFP4, TensorType::TQ1_0, TensorType::TQ2_0, TensorType::NVFP4,
                         TensorType::Q1_0, TensorType::Q2_0}) {
        EXPECT_NE(find_quant_traits(t), nullptr) << tensor_type_name(t);
    }
}

TEST(QuantTraits, RegisteredRowsAreCompleteAndConsistent) {
    for (TensorType t : registered_types()) {
        SCOPED_TRACE(std::string(tensor_type_name(t)));
        const QuantTraits& q = quant_traits(t);
        EXPECT_EQ(q.type, t);
        EXPECT_NE(q.dequantize_row, nullptr);

        // The activation side must be producible: its type is registered and has a quantizer.
        const QuantTraits* act = find_quant_traits(q.dot_type);
        ASSERT_NE(act, nullptr) << "dot type " << tensor_type_name(q.dot_type) << " is not registered";
        EXPECT_NE(act->quantize_row, nullptr);

        // A weight row of whole blocks must also be a whole number of activation blocks.
        const TensorTypeInfo* info = tensor_type_info(t);
        const TensorTypeInfo* act_info = tensor_type_info(q.dot_type);
        ASSERT_NE(info, nullptr);
        ASSERT_NE(act_info, nullptr);
        EXPECT_EQ(info->block_size % act_info->block_size, 0u);

        // Only activation-only formats (their own dot type) may lack a dot product.
        if (!q.dot) {
            EXPECT_EQ(q.dot_type, t);
        }
    }
}

TEST(QuantTraits, LayoutOnlyTypesHaveNoTraits) {
    for (TensorType t : {TensorType::I8, TensorType::I16, TensorType::I32, TensorType::I64, TensorType::F64}) {
        EXPECT_EQ(find_quant_traits(t), nullptr) << tensor_type_name(t);
    }
    EXPECT_EQ(find_quant_traits(static_cast<TensorType>(4)), nullptr);    // removed Q4_2
    EXPECT_EQ(find_quant_traits(static_cast<TensorType>(1000)), nullptr);  // beyond any table
}

TEST(QuantTraitsDeathTest, UnregisteredTypeAborts) {
    EXPECT_DEATH(quant_traits(TensorType::I32), "no quant traits registered for type I32");
}

template <typename Block>
void expect_block_layout(TensorType t) {
    const TensorTypeInfo* info = tensor_type_info(t);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(sizeof(Block), info->block_bytes) << info->name;
    EXPECT_EQ(static_cast<uint32_t>(Block::kValues), info->block_size) << info->name;
}

TEST(QuantTraits, BlockStructsMatchTheGgufLayoutTable) {
    expect_block_layout<BlockQ4_0>(TensorType::Q4_0);
    expect_block_layout<BlockQ4_1>(TensorType::Q4_1);
    expect_block_layout<BlockQ5_0>(TensorType::Q5_0);
    expect_block_layout<BlockQ5_1>(TensorType::Q5_1);
    expect_block_layout<BlockQ8_0>(TensorType::Q8_0);
    expect_block_layout<BlockQ8_1>(TensorType::Q8_1);
    expect_block_layout<BlockQ2_K>(TensorType::Q2_K);
    expect_block_layout<BlockQ3_K>(TensorType::Q3_K);
    expect_block_layout<BlockQ4_K>(TensorType::Q4_K);
    expect_block_layout<BlockQ5_K>(TensorType::Q5_K);
    expect_block_layout<BlockQ6_K>(TensorType::Q6_K);
    expect_block_layout<BlockQ8_K>(TensorType::Q8_K);
    expect_block_layout<BlockMxfp4>(TensorType::MXFP4);
    expect_block_layout<BlockTQ1_0>(TensorType::TQ1_0);
    expect_block_layout<BlockTQ2_0>(TensorType::TQ2_0);
    expect_block_layout<BlockNvfp4>(TensorType::NVFP4);
    expect_block_layout<BlockQ1_0>(TensorType::Q1_0);
    expect_block_layout<BlockQ2_0>(TensorType::Q2_0);
}

// An all-zero row (a pruned expert, padding) must come back as zeros, not NaN from a 0/0 scale,
// and contribute nothing to a dot product.
TEST(QuantTraits, ZeroRowsRoundTripToZero) {
    constexpr int64_t n = 512;  // a whole number of blocks of every format
    const std::vector<float> zeros(n, 0.0f);
    for (TensorType t : registered_types()) {
        const QuantTraits& q = quant_traits(t);
        if (!q.quantize_row) continue;
        SCOPED_TRACE(std::string(tensor_type_name(t)));
        std::vector<uint8_t> row(tensor_type_info(t)->row_bytes(n));
        q.quantize_row(zeros.data(), row.data(), n);
        std::vector<float> back(n, 1.0f);
        q.dequantize_row(row.data(), back.data(), n);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(back[i], 0.0f) << "value " << i;

        if (!q.dot) continue;
        std::vector<float> ones(n, 1.0f);
        std::vector<uint8_t> act(tensor_type_info(q.dot_type)->row_bytes(n));
        quant_traits(q.dot_type).quantize_row(ones.data(), act.data(), n);
        EXPECT_EQ(q.dot(row.data(), act.data(), n), 0.0f);
    }
}

}  // namespace
}  // namespace strata
