// The cache warmer (experts/cache_warmer.h): it reads every range it was given, odd sizes
// included, on pools of one and of several threads; a stop() before the run reads nothing; a
// stop() during a run ends it early; clear() forgets both the ranges and the stop.
#include "experts/cache_warmer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace strata {
namespace {

TEST(CacheWarmer, ReadsEveryRange) {
    std::vector<uint8_t> a(100'000, 1), b(63, 2), c(CacheWarmer::kChunkBytes * 3, 3);
    for (int threads : {1, 3}) {
        ThreadPool pool(ThreadPool::Options{.threads = threads, .spin_us = 0});
        CacheWarmer warmer;
        EXPECT_TRUE(warmer.empty());
        EXPECT_EQ(warmer.run(pool), 0u);
        warmer.add(a.data(), a.size());
        warmer.add(b.data(), b.size());
        warmer.add(c.data(), c.size());
        warmer.add(a.data(), 0);
        EXPECT_EQ(warmer.bytes(), a.size() + b.size() + c.size());
        EXPECT_EQ(warmer.run(pool), a.size() + b.size() + c.size()) << threads << " threads";
        EXPECT_EQ(warmer.run(pool), a.size() + b.size() + c.size()) << "a second run reads them again";
        warmer.clear();
        EXPECT_TRUE(warmer.empty());
        EXPECT_EQ(warmer.run(pool), 0u);
    }
}

TEST(CacheWarmer, StopBeforeTheRunReadsNothingUntilCleared) {
    std::vector<uint8_t> a(1 << 20, 1);
    ThreadPool pool(ThreadPool::Options{.threads = 2, .spin_us = 0});
    CacheWarmer warmer;
    warmer.add(a.data(), a.size());
    warmer.stop();
    EXPECT_EQ(warmer.run(pool), 0u);
    warmer.clear();
    warmer.add(a.data(), a.size());
    EXPECT_EQ(warmer.run(pool), a.size());
}

TEST(CacheWarmer, StopDuringARunEndsIt) {
    // 1 GiB of calloc'd zeros (mapped lazily by the C library at this size): each page faults in
    // on its first read, so reading it all takes far longer (tenths of a second) than the stop
    // takes to arrive.
    constexpr uint64_t kBytes = uint64_t(1) << 30;
    std::unique_ptr<uint8_t, decltype(&std::free)> untouched(static_cast<uint8_t*>(std::calloc(kBytes, 1)), &std::free);
    ASSERT_NE(untouched, nullptr);
    ThreadPool pool(ThreadPool::Options{.threads = 2, .spin_us = 0});
    CacheWarmer warmer;
    warmer.add(untouched.get(), kBytes);
    uint64_t read = kBytes;
    std::thread runner([&] { read = warmer.run(pool); });
    warmer.stop();
    runner.join();
    EXPECT_LT(read, kBytes);
}

}  // namespace
}  // namespace strata
