// STRATA_GPU_ABLATE / STRATA_GPU_EXTRA_LAUNCHES (backend/gpu/op_profiler.h): which ops a timing
// study mutes. Host logic only: it runs wherever the GPU backend is built, GPU or not. Then the
// profiler's op scopes, nested as the expert tiers nest them (on a GPU).
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

// The tiers queue the next layer's router (an op) inside their own op: the flush must time both,
// the outer one over the inner one, and neither may be left without its end event (a profiled
// tiered decode once aborted there).
class GpuOpProfiler : public GpuOpTest {};

TEST_F(GpuOpProfiler, NestedScopesAreTimedEach) {
    gpu::OpProfiler profiler(ctx().stream());
    static_cast<void>(gpu::op_profile_totals().take());
    std::vector<float> host(1 << 20, 1.0f);
    float* a = to_device(host);
    float* b = device_zeros<float>(host.size());
    const uint64_t bytes = host.size() * sizeof(float);
    for (int pass = 0; pass < 2; ++pass) {  // the second pass reuses the first one's events
        profiler.begin("outer");
        gpu::gpu_copy_words(b, a, bytes, ctx());
        profiler.begin("inner");
        gpu::gpu_copy_words(a, b, bytes, ctx());
        profiler.end();
        gpu::gpu_copy_words(b, a, bytes, ctx());
        profiler.end();
        profiler.begin("after");
        gpu::gpu_copy_words(a, b, bytes, ctx());
        profiler.end();
        ctx().synchronize();
        profiler.flush();
    }
    const std::vector<gpu::OpProfileRow> rows = gpu::op_profile_totals().take();
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].name, "outer");
    EXPECT_EQ(rows[1].name, "inner");
    EXPECT_EQ(rows[2].name, "after");
    for (const auto& r : rows) {
        EXPECT_EQ(r.calls, 2u) << r.name;
        EXPECT_GT(r.ms, 0.0) << r.name;
    }
    EXPECT_GT(rows[0].ms, rows[1].ms);  // three copies against one
}
#else
STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(GpuOpAblation)
STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(GpuOpProfiler)
#endif

}  // namespace
}  // namespace strata::test
