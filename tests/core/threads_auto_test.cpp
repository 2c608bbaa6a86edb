// `--threads auto` on recorded readings: the thread count follows the CPUs other programs leave
// free, within the affinity mask, less this process's own work; unreadable load falls back to
// one thread per allowed CPU. No clock and no real /proc are read.
#include <gtest/gtest.h>

#include <utility>

#include "core/cpu_readings.h"
#include "core/threads_auto.h"

namespace strata {
namespace {

// Two readings of /proc/stat a window apart, as the kernel writes them (USER_HZ 100): the
// recorded readings stand in for the machine's.
class RecordedCpus final : public CpuReader {
public:
    int hardware = 2;
    std::optional<std::vector<int>> allowed;
    std::optional<std::map<int, CpuTicks>> first, second;
    double own_first = 0, own_second = 0;
    int reads = 0, process_reads = 0;
    std::chrono::milliseconds paused{0};

    int hardware_threads() override { return hardware; }
    std::optional<std::vector<int>> allowed_cpus() override { return allowed; }
    std::optional<std::map<int, CpuTicks>> cpu_ticks() override { return reads++ == 0 ? first : second; }
    double process_cpu_seconds() override { return process_reads++ == 0 ? own_first : own_second; }
    double ticks_per_second() override { return 100.0; }
    void pause(std::chrono::milliseconds d) override { paused += d; }
};

// A window of 10 ticks (100 ms) in which each CPU was busy for `busy_ticks[cpu]` of them.
RecordedCpus window_with_busy(std::vector<uint64_t> busy_ticks) {
    RecordedCpus r;
    r.hardware = static_cast<int>(busy_ticks.size());
    r.first.emplace();
    r.second.emplace();
    for (int c = 0; c < r.hardware; ++c) {
        (*r.first)[c] = CpuTicks{.idle = 5000, .total = 9000};
        (*r.second)[c] = CpuTicks{.idle = 5000 + 10 - busy_ticks[static_cast<size_t>(c)], .total = 9010};
    }
    return r;
}

TEST(ThreadsAuto, OneBusyCoreOfTwoLeavesOneThread) {
    RecordedCpus r = window_with_busy({10, 0});
    const ThreadsChoice c = choose_threads_auto(r, std::chrono::milliseconds(100));
    EXPECT_EQ(c.threads, 1);
    EXPECT_EQ(r.paused, std::chrono::milliseconds(100));
    EXPECT_NE(c.reason.find("1.0 of them busy"), std::string::npos) << c.reason;
}

TEST(ThreadsAuto, IdleMachineUsesEveryCpu) {
    RecordedCpus r = window_with_busy(std::vector<uint64_t>(16, 0));
    EXPECT_EQ(choose_threads_auto(r).threads, 16);
}

TEST(ThreadsAuto, HalfOfSixteenBusyLeavesEight) {
    std::vector<uint64_t> busy(16, 0);
    for (int c = 0; c < 8; ++c) busy[static_cast<size_t>(c)] = 10;
    RecordedCpus r = window_with_busy(busy);
    EXPECT_EQ(choose_threads_auto(r).threads, 8);
}

// Partly busy cores add up: four cores at 40% are 1.6 cores taken, 6.4 free of 8: 6 threads.
TEST(ThreadsAuto, PartlyBusyCoresAddUp) {
    std::vector<uint64_t> busy(8, 0);
    for (int c = 0; c < 4; ++c) busy[static_cast<size_t>(c)] = 4;
    RecordedCpus r = window_with_busy(busy);
    EXPECT_EQ(choose_threads_auto(r).threads, 6);
}

// Not one CPU free: the CPUs are shared per thread, so every allowed CPU gets a thread.
TEST(ThreadsAuto, NoCpuFreeSharesEveryCpu) {
    RecordedCpus r = window_with_busy({10, 10, 10, 10});
    const ThreadsChoice c = choose_threads_auto(r);
    EXPECT_EQ(c.threads, 4);
    EXPECT_NE(c.reason.find("none free"), std::string::npos) << c.reason;
    r = window_with_busy({10, 4});  // 1.4 busy of 2: 0.6 free
    EXPECT_EQ(choose_threads_auto(r).threads, 2);
    r = window_with_busy({10, 0});  // exactly one free
    EXPECT_EQ(choose_threads_auto(r).threads, 1);
}

// This process's own work during the window (a loader thread) is not another program's.
TEST(ThreadsAuto, OwnWorkIsNotCountedAsBusy) {
    RecordedCpus r = window_with_busy({10, 10, 10});
    r.own_first = 3.0;
    r.own_second = 3.1;  // one CPU for the 100 ms window: two busy with others, one free
    EXPECT_EQ(choose_threads_auto(r).threads, 1);
    r = window_with_busy({10, 10, 10});
    r.own_second = 0.2;  // two CPUs were ours: two free
    EXPECT_EQ(choose_threads_auto(r).threads, 2);
}

// Only the CPUs in the affinity mask count: busy CPUs outside it take nothing away.
TEST(ThreadsAuto, AffinityMaskBoundsTheChoice) {
    RecordedCpus r = window_with_busy({10, 10, 0, 0});
    r.allowed = std::vector<int>{2, 3};
    const ThreadsChoice c = choose_threads_auto(r);
    EXPECT_EQ(c.threads, 2);
    EXPECT_NE(c.reason.find("2 CPUs this process may use"), std::string::npos) << c.reason;
    r = window_with_busy({0, 0, 10, 0});
    r.allowed = std::vector<int>{2, 3};
    EXPECT_EQ(choose_threads_auto(r).threads, 1);
}

TEST(ThreadsAuto, UnknownLoadFallsBackToEveryAllowedCpu) {
    RecordedCpus r;
    r.hardware = 6;
    const ThreadsChoice c = choose_threads_auto(r);
    EXPECT_EQ(c.threads, 6);
    EXPECT_NE(c.reason.find("unknown"), std::string::npos) << c.reason;
    r = RecordedCpus{};
    r.hardware = 6;
    r.allowed = std::vector<int>{0, 5, 7};
    EXPECT_EQ(choose_threads_auto(r).threads, 3);
}

// A reading in which no tick passed (a stalled counter) says nothing about the load.
TEST(ThreadsAuto, NoTicksInTheWindowFallsBack) {
    RecordedCpus r = window_with_busy({10, 0});
    r.second = r.first;
    const ThreadsChoice c = choose_threads_auto(r);
    EXPECT_EQ(c.threads, 2);
    EXPECT_NE(c.reason.find("no ticks"), std::string::npos) << c.reason;
}

// /proc/stat as proc(5) documents it: the machine's sum line is skipped, idle is idle + iowait,
// guest time (already in user) is not added twice.
TEST(ProcStat, ParsesPerCpuLines) {
    const std::string text =
        "cpu  2255 34 2290 22625563 6290 127 456 0 0 0\n"
        "cpu0 1132 34 1441 11311718 3675 127 438 5 7 1\n"
        "cpu1 1123 0 849 11313845 2614 0 18 0 0 0\n"
        "intr 114930548 113199788 3 0 5 263 0 4 [... 50 more]\n"
        "ctxt 1990473\n";
    const auto ticks = parse_proc_stat(text);
    ASSERT_EQ(ticks.size(), 2u);
    EXPECT_EQ(ticks.at(0).idle, 11311718u + 3675u);
    EXPECT_EQ(ticks.at(0).total, 1132u + 34 + 1441 + 11311718 + 3675 + 127 + 438 + 5);
    EXPECT_EQ(ticks.at(1).total, 1123u + 849 + 11313845 + 2614 + 18);
    EXPECT_TRUE(parse_proc_stat("").empty());
    EXPECT_TRUE(parse_proc_stat("cpu  1 2 3 4\nnonsense\n").empty());
}

}  // namespace
}  // namespace strata
