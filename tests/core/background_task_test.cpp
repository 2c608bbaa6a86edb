#include "core/background_task.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace strata {
namespace {

class BackgroundTaskSpin : public ::testing::TestWithParam<int> {};

// The task runs on another thread while the starter goes on: it waits for a flag that the
// starter raises only after start() has returned (a task run inline by start() would never see it).
TEST_P(BackgroundTaskSpin, RunsWhileTheStarterWorks) {
    BackgroundTask task(GetParam());
    std::atomic<bool> raised{false};
    bool saw_flag = false;
    std::thread::id ran_on;
    auto work = [&] {
        ran_on = std::this_thread::get_id();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!raised.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        saw_flag = raised.load();
    };
    task.start(work);
    raised.store(true);
    task.wait();
    EXPECT_TRUE(saw_flag);
    EXPECT_NE(ran_on, std::this_thread::get_id());
}

// Many short hand-overs in a row each run their task exactly once, in order, and wait() sees its
// writes.
TEST_P(BackgroundTaskSpin, ManyRoundTrips) {
    BackgroundTask task(GetParam());
    int64_t sum = 0;
    for (int64_t i = 1; i <= 2000; ++i) {
        auto add = [&] { sum += i; };
        task.start(add);
        task.wait();
        ASSERT_EQ(sum, i * (i + 1) / 2);
    }
}

TEST_P(BackgroundTaskSpin, WaitRethrowsAndTheThreadKeepsWorking) {
    BackgroundTask task(GetParam());
    auto fail = [] { throw std::runtime_error("lane failed"); };
    task.start(fail);
    EXPECT_THROW(task.wait(), std::runtime_error);
    int runs = 0;
    auto count = [&] { ++runs; };
    task.start(count);
    task.wait();
    EXPECT_EQ(runs, 1);
}

TEST_P(BackgroundTaskSpin, WaitWithoutStartReturnsAndDestructionIsClean) {
    BackgroundTask task(GetParam());
    task.wait();
    int runs = 0;
    auto count = [&] { ++runs; };
    task.start(count);
    task.wait();
    task.wait();  // a second wait for the same task returns at once
    EXPECT_EQ(runs, 1);
}

// 0: every hand-over sleeps on the condition variables; 500: the polling path.
INSTANTIATE_TEST_SUITE_P(SpinTimes, BackgroundTaskSpin, ::testing::Values(0, 500));

}  // namespace
}  // namespace strata
