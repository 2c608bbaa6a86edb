#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <thread>
#include <cmath>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/fp16.h"
#include "core/thread_pool.h"

namespace strata {
namespace {

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
    ThreadPool pool(ThreadPool::Options{.threads = 4});
    EXPECT_EQ(pool.size(), 4);
    for (int64_t n : {1, 3, 4, 5, 1000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<int> max_worker{0};
        pool.parallel_for(n, [&](int64_t begin, int64_t end, int worker) {
            for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
            int w = max_worker.load();
            while (worker > w && !max_worker.compare_exchange_weak(w, worker)) {}
        });
        for (auto& h : hits) EXPECT_EQ(h.load(), 1);
        EXPECT_LT(max_worker.load(), 4);
    }
}

TEST(ThreadPool, ReusedManyTimes) {
    ThreadPool pool(ThreadPool::Options{.threads = 3});
    std::atomic<int64_t> sum{0};
    for (int round = 0; round < 2000; ++round) {
        pool.parallel_for(10, [&](int64_t b, int64_t e, int) {
            for (int64_t i = b; i < e; ++i) sum += i;
        });
    }
    EXPECT_EQ(sum.load(), 2000 * 45);
}

// With spin_us the workers poll between tasks and fall back to sleeping after it: calls that come
// back-to-back (spin path) and after a pause longer than the spin (sleep path) must both complete
// every range, or a lost wake-up would hang here.
TEST(ThreadPool, SpinningPoolCompletesAfterShortAndLongGaps) {
    ThreadPool pool(ThreadPool::Options{.threads = 3, .spin_us = 50});
    std::atomic<int64_t> sum{0};
    for (int round = 0; round < 400; ++round) {
        if (round % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(500));
        pool.parallel_for(10, [&](int64_t b, int64_t e, int) {
            for (int64_t i = b; i < e; ++i) sum += i;
        });
    }
    EXPECT_EQ(sum.load(), 400 * 45);
}

TEST(AlignedBuffer, AlignmentAndZeroFill) {
    AlignedBuffer small(100);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % AlignedBuffer::kSimdAlignment, 0u);
    AlignedBuffer big(AlignedBuffer::kHugePage + 1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % AlignedBuffer::kHugePage, 0u);
    for (size_t i = 0; i < big.size(); i += 4096) EXPECT_EQ(big.data()[i], 0);
}

// IEEE 754 half-precision facts (not our own outputs): exact values, subnormals, infinities.
TEST(Fp16, KnownEncodings) {
    EXPECT_EQ(fp16_to_fp32(0x3C00), 1.0f);
    EXPECT_EQ(fp16_to_fp32(0xC000), -2.0f);
    EXPECT_EQ(fp16_to_fp32(0x7BFF), 65504.0f);
    EXPECT_EQ(fp16_to_fp32(0x0001), 5.9604644775390625e-08f);  // smallest subnormal, 2^-24
    EXPECT_TRUE(std::isinf(fp16_to_fp32(0x7C00)));
    EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7E00)));
    EXPECT_EQ(fp32_to_fp16(1.0f), 0x3C00);
    EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7BFF);
    EXPECT_EQ(fp32_to_fp16(1e6f), 0x7C00);           // overflow to infinity
    EXPECT_EQ(fp32_to_fp16(1.0f + 1.0f / 2048), 0x3C00);  // halfway rounds to even
    EXPECT_EQ(fp32_to_fp16(1.0f + 3.0f / 2048), 0x3C02);  // halfway rounds to even (up)
    for (uint32_t h = 0; h < 0x7C00; ++h) {  // every finite positive half round-trips
        ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(static_cast<uint16_t>(h))), h);
    }
    EXPECT_EQ(bf16_to_fp32(0x3F80), 1.0f);
    EXPECT_EQ(fp32_to_bf16(1.0f), 0x3F80);
    EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie to even
    EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// The default polls only where a core is likely free for every thread (8+ hardware threads).
TEST(ThreadPoolSpin, AutoResolvesByMachineSizeAndExplicitValuesStay) {
    const int want = ThreadPool::hardware_threads() >= ThreadPool::kAutoSpinMinThreads ? ThreadPool::kAutoSpinUs : 0;
    EXPECT_EQ(ThreadPool::resolve_spin_us(ThreadPool::kAutoSpin), want);
    EXPECT_EQ(ThreadPool(ThreadPool::Options{.threads = 2}).spin_us(), want);
    EXPECT_EQ(ThreadPool(ThreadPool::Options{.threads = 2, .spin_us = 0}).spin_us(), 0);
    EXPECT_EQ(ThreadPool(ThreadPool::Options{.threads = 2, .spin_us = 120}).spin_us(), 120);
    EXPECT_EQ(ThreadPool::resolve_spin_us(-7), 0);
}

}  // namespace
}  // namespace strata
