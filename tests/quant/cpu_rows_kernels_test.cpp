// Every multi-row dot kernel (quant/cpu/dot_rows.h) against the single-row kernel of the same type
// and SIMD level: for any row count (1 to 4 and the odd and larger counts that mix 4-row groups
// with a 1-3 row tail) and any row stride, row r of the
// multi-row result must have the same bits as the single-row kernel on row r. Matmul results then do not depend on whether, or
// where in a block, a row went through the multi-row kernel. The single-row kernels themselves
// are checked against the scalar references and ggml's vectors in cpu_kernels_test.cpp.
// Cases come from the multi-row tables, so a kernel added to dot_rows_table_<level>.cpp is tested
// without touching this file.

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/fp16.h"
#include "quant/cpu/dot_kernels.h"
#include "quant/cpu/dot_rows.h"
#include "quant/k_quants.h"
#include "quant/traits.h"

namespace strata {
namespace {

struct RowsCase {
    TensorType type;
    SimdLevel level;
};

void PrintTo(const RowsCase& c, std::ostream* os) {
    *os << tensor_type_name(c.type) << " at " << simd_level_name(c.level);
}

std::string case_name(const ::testing::TestParamInfo<RowsCase>& info) {
    return std::string(tensor_type_name(info.param.type)) + "_" + std::string(simd_level_name(info.param.level));
}

std::vector<RowsCase> rows_cases() {
    std::vector<RowsCase> cases;
    for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
        size_t count = 0;
        const DotRowsKernel* table =
            level == SimdLevel::Avx2 ? avx2_dot_rows_kernels(&count) : avx512_dot_rows_kernels(&count);
        for (size_t i = 0; i < count; ++i) {
            if (table[i].rows) cases.push_back({table[i].type, level});
        }
    }
    return cases;
}

class CpuRowsKernel : public ::testing::TestWithParam<RowsCase> {
protected:
    void SetUp() override {
        const RowsCase& c = GetParam();
        if (cpu_simd_level() < c.level) {
            GTEST_SKIP() << "this CPU does not support " << simd_level_name(c.level) << " (it has "
                         << simd_level_name(cpu_simd_level()) << ")";
        }
        traits_ = &quant_traits(c.type);
        rows_ = cpu_dot_rows_kernel_exact(c.type, c.level);
        tile_ = cpu_dot_tile_kernel_exact(c.type, c.level);
        single_ = cpu_dot_kernel_exact(c.type, c.level);
        ASSERT_NE(rows_, nullptr);
        ASSERT_NE(single_, nullptr) << "a multi-row kernel without a single-row kernel of its level";
        block_size_ = tensor_type_info(c.type)->block_size;
    }

    std::vector<uint8_t> random_activation(int64_t n, std::mt19937& rng) const {
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = normal(rng);
        std::vector<uint8_t> out(tensor_type_info(traits_->dot_type)->row_bytes(static_cast<uint64_t>(n)));
        quant_traits(traits_->dot_type).quantize_row(x.data(), out.data(), n);
        return out;
    }

    // `rows` rows of n values, `stride` bytes apart: quantized from normal values (shifted on odd
    // rows so minimums and offsets matter), or random bytes when `random_bytes`, with every fp16
    // scale field of the K-quant block set to a sane value.
    std::vector<uint8_t> random_rows(int64_t n, int64_t rows, uint64_t stride, bool random_bytes, std::mt19937& rng) const {
        const uint64_t row_bytes = tensor_type_info(GetParam().type)->row_bytes(static_cast<uint64_t>(n));
        std::vector<uint8_t> w(static_cast<size_t>(stride * static_cast<uint64_t>(rows)), 0xA5);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::uniform_int_distribution<int> byte(0, 255);
        std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
        std::vector<float> x(static_cast<size_t>(n));
        for (int64_t r = 0; r < rows; ++r) {
            uint8_t* row = w.data() + static_cast<uint64_t>(r) * stride;
            if (!random_bytes && traits_->quantize_row) {
                for (float& v : x) v = normal(rng) + (r % 2 ? 1.5f : 0.0f);
                traits_->quantize_row(x.data(), row, n);
                continue;
            }
            for (uint64_t b = 0; b < row_bytes; ++b) row[b] = static_cast<uint8_t>(byte(rng));
            const uint32_t block_bytes = tensor_type_info(GetParam().type)->block_bytes;
            for (uint64_t off = 0; off < row_bytes; off += block_bytes) {
                for (size_t field : scale_offsets()) {
                    const uint16_t h = fp32_to_fp16(scale(rng));
                    std::memcpy(row + off + field, &h, sizeof(h));
                }
            }
        }
        return w;
    }

    std::vector<size_t> scale_offsets() const {
        switch (GetParam().type) {
            case TensorType::Q2_K: return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
            case TensorType::Q3_K: return {offsetof(BlockQ3_K, d)};
            case TensorType::Q4_K: return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
            case TensorType::Q5_K: return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
            case TensorType::Q6_K: return {offsetof(BlockQ6_K, d)};
            default: ADD_FAILURE() << "no scale offsets for " << tensor_type_name(GetParam().type); return {};
        }
    }

    void expect_same_bits(int64_t n, int64_t rows, uint64_t stride, bool random_bytes, std::mt19937& rng) {
        const std::vector<uint8_t> w = random_rows(n, rows, stride, random_bytes, rng);
        const std::vector<uint8_t> a = random_activation(n, rng);
        std::vector<float> got(static_cast<size_t>(rows) + 1, -1.0f);  // one past the end must stay untouched
        rows_(w.data(), stride, a.data(), n, rows, got.data());
        for (int64_t r = 0; r < rows; ++r) {
            const float want = single_(w.data() + static_cast<uint64_t>(r) * stride, a.data(), n);
            EXPECT_EQ(std::bit_cast<uint32_t>(got[static_cast<size_t>(r)]), std::bit_cast<uint32_t>(want))
                << "row " << r << " of " << rows << ", n = " << n << ", stride " << stride
                << (random_bytes ? ", random bytes" : ", quantized") << ": got " << got[static_cast<size_t>(r)]
                << ", single-row kernel " << want;
        }
        EXPECT_EQ(got[static_cast<size_t>(rows)], -1.0f) << "wrote past row " << rows;
    }

    // Tiles: `tokens` activation rows against `rows` weight rows into an output of out_stride
    // columns per token; each (row, token) must have the single-row kernel's bits, and the
    // columns past `rows` must stay untouched.
    void expect_tile_same_bits(int64_t n, int64_t rows, int64_t tokens, bool random_bytes, std::mt19937& rng) {
        const uint64_t stride = tensor_type_info(GetParam().type)->row_bytes(static_cast<uint64_t>(n));
        const std::vector<uint8_t> w = random_rows(n, rows, stride, random_bytes, rng);
        std::vector<std::vector<uint8_t>> acts;
        std::vector<const void*> act_ptrs;
        for (int64_t t = 0; t < tokens; ++t) acts.push_back(random_activation(n, rng));
        for (const auto& a : acts) act_ptrs.push_back(a.data());
        const int64_t out_stride = rows + 3;
        std::vector<float> got(static_cast<size_t>(tokens * out_stride), -1.0f);
        tile_(w.data(), stride, act_ptrs.data(), tokens, n, rows, got.data(), out_stride);
        for (int64_t t = 0; t < tokens; ++t) {
            for (int64_t r = 0; r < out_stride; ++r) {
                const float g = got[static_cast<size_t>(t * out_stride + r)];
                if (r >= rows) {
                    EXPECT_EQ(g, -1.0f) << "wrote past row " << rows << " of token " << t;
                    continue;
                }
                const float want = single_(w.data() + static_cast<uint64_t>(r) * stride, act_ptrs[static_cast<size_t>(t)], n);
                EXPECT_EQ(std::bit_cast<uint32_t>(g), std::bit_cast<uint32_t>(want))
                    << "row " << r << " of " << rows << ", token " << t << " of " << tokens << ", n = " << n
                    << (random_bytes ? ", random bytes" : ", quantized") << ": got " << g << ", single-row kernel " << want;
            }
        }
    }

    const QuantTraits* traits_ = nullptr;
    DotRowsFn rows_ = nullptr;
    DotTileFn tile_ = nullptr;
    DotFn single_ = nullptr;
    int64_t block_size_ = 0;
};

TEST_P(CpuRowsKernel, SameBitsAsSingleRowKernel) {
    std::mt19937 rng(4321);
    const int64_t b = block_size_;
    for (int64_t n : {b, 3 * b, 2048 / b * b, 768 / b * b + b}) {
        const uint64_t row_bytes = tensor_type_info(GetParam().type)->row_bytes(static_cast<uint64_t>(n));
        for (int64_t rows : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16}) {
            for (bool random_bytes : {false, true}) {
                expect_same_bits(n, rows, row_bytes, random_bytes, rng);
            }
        }
        // A stride wider than the row (rows of a larger matrix, padding between them).
        expect_same_bits(n, 7, row_bytes + 3 * tensor_type_info(GetParam().type)->block_bytes, true, rng);
    }
}

TEST_P(CpuRowsKernel, TileSameBitsAsSingleRowKernel) {
    if (!tile_) GTEST_SKIP() << "no tile kernel for this type at this level";
    std::mt19937 rng(8765);
    const int64_t b = block_size_;
    for (int64_t n : {b, 3 * b, 2048 / b * b}) {
        for (int64_t tokens : {1, 2, 3, 4, 5, 7, 9}) {
            for (int64_t rows : {1, 3, 6}) {
                for (bool random_bytes : {false, true}) expect_tile_same_bits(n, rows, tokens, random_bytes, rng);
            }
        }
    }
}

TEST_P(CpuRowsKernel, ZeroRowsWritesNothing) {
    float out = -1.0f;
    rows_(nullptr, 0, nullptr, block_size_, 0, &out);
    EXPECT_EQ(out, -1.0f);
}

TEST_P(CpuRowsKernel, DispatchPairsWithTheSingleRowLevel) {
    // Asked for this level, the dispatcher returns this level's multi-row kernel, which pairs
    // with the single-row kernel cpu_dot_kernel returns for the same request.
    EXPECT_EQ(cpu_dot_kernel(GetParam().type, GetParam().level), single_);
    EXPECT_EQ(cpu_dot_rows_kernel(GetParam().type, GetParam().level), rows_);
    EXPECT_EQ(cpu_dot_tile_kernel(GetParam().type, GetParam().level), tile_);
}

INSTANTIATE_TEST_SUITE_P(Kernels, CpuRowsKernel, ::testing::ValuesIn(rows_cases()), case_name);

TEST(CpuRowsDispatch, NoMultiRowKernelWhereTheSingleRowLevelHasNone) {
    // IQ1_S has an avx2 single-row kernel only; at the avx512 request the pair must still come
    // from avx2 (here: no multi-row kernel at all), never from another level than the single row.
    EXPECT_EQ(cpu_dot_rows_kernel(TensorType::IQ1_S), nullptr);
    EXPECT_EQ(cpu_dot_rows_kernel(TensorType::F16, SimdLevel::Scalar), nullptr);
}

}  // namespace
}  // namespace strata
