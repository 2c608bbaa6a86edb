// The GPU op self-test of `strata devices --selftest` (runtime/gpu_op_selftest.h): its verdicts
// from NMSE values (no GPU needed), the skip of a build without a GPU backend with the reason,
// and, where a GPU is present, a run in which every family passes. GPU runs skip cleanly without
// one (tests/gpu/op_parity.h's convention: gpu_unavailable_reason()).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <vector>

#include "model/gpu/gpu_model.h"
#include "core/nmse.h"
#include "runtime/gpu_op_selftest.h"

namespace strata {
namespace {

TEST(GpuOpSelftest, NmseIsErrorOverReferenceEnergy) {
    const std::vector<float> want = {1.0f, -2.0f, 2.0f};  // Σ want² = 9
    EXPECT_DOUBLE_EQ(normalized_mse(want, want), 0.0);
    const std::vector<float> got = {1.0f, -2.0f, 5.0f};   // Σ err² = 9
    EXPECT_DOUBLE_EQ(normalized_mse(got, want), 1.0);
    const std::vector<float> zeros(3, 0.0f), small = {0.5f, 0.0f, 0.0f};
    EXPECT_DOUBLE_EQ(normalized_mse(small, zeros), 0.25);  // all-zero reference: the plain error sum
    EXPECT_TRUE(std::isnan(normalized_mse(std::vector<float>(2), want))) << "sizes that differ never pass";
}

TEST(GpuOpSelftest, CheckPassesOnlyWhenEveryCaseIsWithinTheThreshold) {
    const GpuOpCheck ok = make_gpu_op_check("matmul Q4_K", 5e-4, {{"decode int8", 1e-6}, {"batch 40 tiled", 2e-5}});
    EXPECT_TRUE(ok.passed);
    EXPECT_DOUBLE_EQ(ok.nmse, 2e-5);
    EXPECT_DOUBLE_EQ(ok.threshold, 5e-4);
    EXPECT_NE(ok.detail.find("limit 5e-04"), std::string::npos) << ok.detail;
    EXPECT_NE(ok.detail.find("decode int8 1.0e-06"), std::string::npos) << ok.detail;
    EXPECT_NE(ok.detail.find("batch 40 tiled 2.0e-05"), std::string::npos) << ok.detail;

    const GpuOpCheck over = make_gpu_op_check("rope", 1e-11, {{"normal", 1e-13}, {"neox", 3e-2}});
    EXPECT_FALSE(over.passed);
    EXPECT_DOUBLE_EQ(over.nmse, 3e-2);
    EXPECT_NE(over.detail.find("neox 3.0e-02 (over)"), std::string::npos) << over.detail;

    const double nan = std::numeric_limits<double>::quiet_NaN();
    const GpuOpCheck with_nan = make_gpu_op_check("attention", 1e-10, {{"decode", nan}, {"prompt", 1e-12}});
    EXPECT_FALSE(with_nan.passed) << "NaN output must fail";
    EXPECT_TRUE(std::isnan(with_nan.nmse));

    const GpuOpCheck wrong_ids = make_gpu_op_check("moe routing", 1e-12, {{"weights", 0.0}}, "2 expert ids differ from the CPU's");
    EXPECT_FALSE(wrong_ids.passed);
    EXPECT_NE(wrong_ids.detail.find("2 expert ids differ"), std::string::npos) << wrong_ids.detail;

    EXPECT_FALSE(make_gpu_op_check("empty", 1.0, {}).passed) << "a family that ran nothing proves nothing";
    const GpuOpCheck failed = failed_gpu_op_check("rms_norm", 1e-11, "device allocation of 16 bytes failed");
    EXPECT_FALSE(failed.passed);
    EXPECT_EQ(failed.detail, "device allocation of 16 bytes failed");
}

TEST(GpuOpSelftest, ReportPassesWhenEveryCheckDoesOrNothingRan) {
    GpuOpSelftestReport report;
    EXPECT_TRUE(report.passed());
    report.ran = true;
    report.checks.push_back(make_gpu_op_check("a", 1.0, {{"x", 0.5}}));
    EXPECT_TRUE(report.passed());
    report.checks.push_back(make_gpu_op_check("b", 1.0, {{"x", 2.0}}));
    EXPECT_FALSE(report.passed());
}

#if !STRATA_HAS_GPU

TEST(GpuOpSelftest, SkippedWithTheReasonInABuildWithoutGpu) {
    const GpuOpSelftestReport report = run_gpu_op_selftest({});
    EXPECT_FALSE(report.ran);
    EXPECT_TRUE(report.checks.empty());
    EXPECT_TRUE(report.passed()) << "a skip must not fail `strata devices --selftest`";
    EXPECT_NE(report.skipped_reason.find("built without a GPU backend"), std::string::npos) << report.skipped_reason;
    EXPECT_NE(gpu_unavailable_reason().find("no GPU support in this build"), std::string::npos);
}

#else

TEST(GpuOpSelftest, EveryFamilyPassesOnTheGpu) {
    const std::string why = gpu_unavailable_reason();
    if (!why.empty()) {
        const GpuOpSelftestReport report = run_gpu_op_selftest({});
        EXPECT_FALSE(report.ran);
        EXPECT_EQ(report.skipped_reason, why);
        GTEST_SKIP() << "no GPU: " << why;
    }
    const GpuOpSelftestReport report = run_gpu_op_selftest({});
    ASSERT_TRUE(report.ran) << report.skipped_reason;
    std::set<std::string> families;
    for (const GpuOpCheck& c : report.checks) {
        std::printf("gpu-op-selftest  %-4s %s: %s\n", c.passed ? "ok" : "FAIL", c.name.c_str(), c.detail.c_str());
        EXPECT_TRUE(c.passed) << c.name << ": " << c.detail;
        families.insert(c.name.substr(0, c.name.find(' ')));
    }
    for (const char* f : {"matmul", "rms_norm", "rope", "moe", "attention"}) EXPECT_TRUE(families.count(f)) << f;
    EXPECT_EQ(report.checks.size(), 10u);
}

TEST(GpuOpSelftest, ACardOfTheOtherVendorIsSkipped) {
    const GpuOpSelftestReport report = run_gpu_op_selftest({.ordinal = 0, .runtime = "metal"});
    EXPECT_FALSE(report.ran);
    EXPECT_NE(report.skipped_reason.find("the card on metal"), std::string::npos) << report.skipped_reason;
}

#endif

}  // namespace
}  // namespace strata
