// The CPU op profile (backend/cpu/cpu_op_profile.h): scopes add their time by name, a nested scope's
// time is its own and not its parent's, and nothing is recorded while profiling is off.
#include "backend/cpu/cpu_op_profile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace strata {
namespace {

double ms_of(const std::vector<OpProfileRow>& rows, const std::string& name, uint64_t* calls = nullptr) {
    for (const OpProfileRow& r : rows) {
        if (r.name != name) continue;
        if (calls) *calls = r.calls;
        return r.ms;
    }
    ADD_FAILURE() << "no row " << name;
    return -1;
}

TEST(CpuOpProfile, NestedScopesAreTimedExclusively) {
    enable_cpu_op_profiling(true);
    static_cast<void>(cpu_op_profile_totals().take());
    for (int i = 0; i < 2; ++i) {
        CpuOpScope outer("outer");
        CpuOpScope inner("inner");
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
    }
    {
        CpuOpScope outer("outer");
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        CpuOpScope inner("inner");
    }
    enable_cpu_op_profiling(false);
    const std::vector<OpProfileRow> rows = cpu_op_profile_totals().take();
    uint64_t outer_calls = 0, inner_calls = 0;
    const double outer = ms_of(rows, "outer", &outer_calls), inner = ms_of(rows, "inner", &inner_calls);
    EXPECT_EQ(outer_calls, 3u);
    EXPECT_EQ(inner_calls, 3u);
    // inner slept 120 ms in all; outer itself only the 10 ms of its last call. Counted in outer,
    // inner's time would make it at least 130 ms; the bound leaves a loaded machine 60 ms to
    // oversleep.
    EXPECT_GE(inner, 120.0);
    EXPECT_GE(outer, 10.0);
    EXPECT_LT(outer, 70.0) << "the inner scopes' time was counted in the outer one";
    EXPECT_EQ(rows.size(), 2u);
}

TEST(CpuOpProfile, OffRecordsNothing) {
    enable_cpu_op_profiling(false);
    static_cast<void>(cpu_op_profile_totals().take());
    { CpuOpScope scope("quiet"); }
    EXPECT_TRUE(cpu_op_profile_totals().take().empty());
}

}  // namespace
}  // namespace strata
