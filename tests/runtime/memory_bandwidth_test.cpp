// The read-bandwidth probe (runtime/memory_bandwidth.h): its read loops sum every 64-bit word of
// the range, whatever their prefetch window (a prefetch past the end is a hint and reads nothing),
// and the probe reports a positive rate, the buffer it read, and one of the windows it tried.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "quant/cpu/cpu_features.h"
#include "runtime/memory_bandwidth.h"
#include "runtime/memory_bandwidth_kernels.h"

namespace strata {
namespace {

TEST(MemoryBandwidth, ReadLoopsSumEveryWordWithAnyWindow) {
    constexpr uint64_t kWords = 64 * 1024 / 8;  // 64 KiB: a multiple of both loops' 256-byte step
    AlignedBuffer buffer(kWords * sizeof(uint64_t));
    std::vector<uint64_t> words(kWords);
    std::iota(words.begin(), words.end(), uint64_t(1) << 40);
    std::memcpy(buffer.data(), words.data(), buffer.size());
    const uint64_t want = std::accumulate(words.begin(), words.end(), uint64_t(0));
    for (uint64_t window : {0, 2048, 4096, 1 << 20}) {
        EXPECT_EQ(sum_words_baseline(buffer.data(), buffer.size(), window), want) << "baseline, window " << window;
        if (cpu_simd_level() >= SimdLevel::Avx2) {
            EXPECT_EQ(sum_words_avx2(buffer.data(), buffer.size(), window), want) << "avx2, window " << window;
        }
    }
}

TEST(MemoryBandwidth, ProbeReportsItsBufferAndAWindowItTried) {
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    ReadBandwidthProbe probe(pool, uint64_t(8) << 20);
    const MemoryBandwidth bw = probe.measure(2);
    EXPECT_GT(bw.bytes_per_second, 0.0);
    EXPECT_EQ(bw.buffer_bytes, uint64_t(8) << 20);
    EXPECT_EQ(bw.passes, 2);
    EXPECT_EQ(bw.threads, 2);
    EXPECT_TRUE(bw.prefetch_bytes == 0 || bw.prefetch_bytes == 2048 || bw.prefetch_bytes == 4096) << bw.prefetch_bytes;
}

}  // namespace
}  // namespace strata
