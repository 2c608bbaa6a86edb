// check_tensor_values finds NaN and infinite weights by tensor, row and block — in a quantized
// tensor (a NaN fp16 scale) and in a float one — and passes a clean file.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/fp16.h"
#include "gguf/writer.h"
#include "quant/check_values.h"
#include "quant/legacy.h"
#include "quant/traits.h"
#include "support/scratch.h"

namespace strata {
namespace {

// A Q8_0 tensor [128, 5] and an F16 tensor [64, 3], quantized from normal values, plus an I32 one.
struct Tensors {
    std::vector<uint8_t> q8, f16, i32;
};
Tensors clean_tensors() {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal;
    std::vector<float> x(128 * 5);
    for (float& v : x) v = normal(rng);
    Tensors t;
    t.q8.resize(tensor_type_info(TensorType::Q8_0)->row_bytes(128) * 5);
    quant_traits(TensorType::Q8_0).quantize_row(x.data(), t.q8.data(), 128 * 5);
    t.f16.resize(64 * 3 * 2);
    quant_traits(TensorType::F16).quantize_row(x.data(), t.f16.data(), 64 * 3);
    t.i32.assign(16, 0xFF);  // I32 has no dequantizer: skipped, whatever its bytes
    return t;
}

ValueCheck check(const Tensors& t) {
    test::ScratchDir dir;
    GgufWriter w;
    EXPECT_TRUE(w.add_tensor("a.weight", TensorType::Q8_0, {128, 5}, t.q8));
    EXPECT_TRUE(w.add_tensor("b.weight", TensorType::F16, {64, 3}, t.f16));
    EXPECT_TRUE(w.add_tensor("c.ids", TensorType::I32, {4}, t.i32));
    EXPECT_TRUE(w.write(dir.path("m.gguf")));
    auto f = GgufFile::open(dir.path("m.gguf"));
    EXPECT_TRUE(f.is_ok()) << f.status().message();
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    return check_tensor_values(*f, pool);
}

TEST(CheckValues, CleanFilePasses) {
    const ValueCheck c = check(clean_tensors());
    EXPECT_EQ(c.tensors_checked, 2u);
    EXPECT_EQ(c.tensors_skipped, 1u);
    EXPECT_TRUE(c.faults.empty());
}

TEST(CheckValues, NamesTheTensorRowAndBlockOfEachFault) {
    Tensors t = clean_tensors();
    // Q8_0 row 3, block 2 (values 64-95): a NaN scale. Row 4 gets one too: the first row is named.
    const uint64_t row_bytes = tensor_type_info(TensorType::Q8_0)->row_bytes(128);
    const uint16_t nan = 0x7E00;
    std::memcpy(t.q8.data() + 3 * row_bytes + 2 * sizeof(BlockQ8_0), &nan, 2);
    std::memcpy(t.q8.data() + 4 * row_bytes, &nan, 2);
    // F16 row 1, value 10: +infinity.
    const uint16_t inf = 0x7C00;
    std::memcpy(t.f16.data() + (64 + 10) * 2, &inf, 2);
    const ValueCheck c = check(t);
    ASSERT_EQ(c.faults.size(), 2u);
    EXPECT_EQ(c.faults[0].tensor, "a.weight");
    EXPECT_EQ(c.faults[0].row, 3);
    EXPECT_EQ(c.faults[0].block, 2);
    EXPECT_TRUE(c.faults[0].nan);
    EXPECT_EQ(c.faults[0].describe(32), "a.weight: row 3, block 2 (values 64-95) dequantizes to NaN");
    EXPECT_EQ(c.faults[1].tensor, "b.weight");
    EXPECT_EQ(c.faults[1].row, 1);
    EXPECT_EQ(c.faults[1].value, 10);
    EXPECT_FALSE(c.faults[1].nan);
    EXPECT_EQ(c.faults[1].describe(1), "b.weight: row 1, value 10 is infinite");
}

}  // namespace
}  // namespace strata
