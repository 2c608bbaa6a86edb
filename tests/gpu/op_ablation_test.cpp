// STRATA_GPU_ABLATE / STRATA_GPU_EXTRA_LAUNCHES (backend/gpu/op_profiler.h): which ops a timing
// study mutes. Host logic only: it runs wherever the GPU backend is built, GPU or not.
#include <gtest/gtest.h>

#include "gpu/op_parity.h"

#if STRATA_HAS_GPU
#include "backend/gpu/op_profiler.h"
#endif

namespace strata::test {
namespace {

#if STRATA_HAS_GPU
TEST(GpuOpAblation, UnsetMutesNothing) {
    const gpu::OpAblation a = gpu::parse_op_ablation(nullptr, nullptr);
    EXPECT_FALSE(a.active());
    EXPECT_FALSE(a.mutes("attention"));
    EXPECT_EQ(a.extra_launches, 0);
}

TEST(GpuOpAblation, NamesMatchWholeOrByPrefix) {
    const gpu::OpAblation a = gpu::parse_op_ablation("attention,,matmul_experts *", nullptr);
    ASSERT_EQ(a.names.size(), 2u);  // the empty item is dropped
    EXPECT_TRUE(a.active());
    EXPECT_TRUE(a.mutes("attention"));
    EXPECT_FALSE(a.mutes("attention_part"));  // no '*': the whole name only
    EXPECT_TRUE(a.mutes("matmul_experts down"));
    EXPECT_TRUE(a.mutes("matmul_experts gate_up_swiglu"));
    EXPECT_FALSE(a.mutes("matmul attn_qkv"));
}

TEST(GpuOpAblation, ExtraLaunchesAloneMakeAStudy) {
    const gpu::OpAblation a = gpu::parse_op_ablation("", "3");
    EXPECT_TRUE(a.active());
    EXPECT_EQ(a.extra_launches, 3);
    EXPECT_FALSE(a.mutes("attention"));
    EXPECT_EQ(gpu::parse_op_ablation(nullptr, "-2").extra_launches, 0);  // negative: none
}
#else
STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(GpuOpAblation)
#endif

}  // namespace
}  // namespace strata::test
