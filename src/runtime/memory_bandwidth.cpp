#include "runtime/memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/aligned_buffer.h"
#include "quant/cpu/cpu_features.h"
#include "runtime/memory_bandwidth_kernels.h"

namespace strata {

// Four independent vector accumulators keep enough loads in flight that one core is limited by
// memory, not by the add chain; the GCC vector type compiles to whatever SIMD the build targets.
using U64x4 = uint64_t __attribute__((vector_size(32)));

uint64_t sum_words_baseline(const uint8_t* p, uint64_t bytes, uint64_t prefetch_bytes) {
    constexpr uint64_t kStep = 4 * sizeof(U64x4);
    const uint64_t n = bytes / kStep;
    U64x4 a = {}, b = {}, c = {}, d = {};
    for (uint64_t i = 0; i < n; ++i) {
        if (prefetch_bytes != 0) {
            for (uint64_t line = 0; line < kStep; line += 64) __builtin_prefetch(p + i * kStep + prefetch_bytes + line, 0, 3);
        }
        U64x4 v[4];
        std::memcpy(v, p + i * sizeof(v), sizeof(v));
        a += v[0];
        b += v[1];
        c += v[2];
        d += v[3];
    }
    U64x4 s = a + b + c + d;
    return s[0] + s[1] + s[2] + s[3];
}

namespace {

using SumFn = uint64_t (*)(const uint8_t*, uint64_t, uint64_t);

// Each pass reads the buffer once with each window (bytes of software prefetch ahead; 0: none)
// and the fastest counts: the matmul streams its weights with a window (2 or 4 KiB), and on the
// Xeon the reads without one fell 15-35% short of it, so decode measured 105-111% of a bound
// taken without (bench/results/2026-12-01-cpu-attention-f32-rows/raw/device_probe).
constexpr uint64_t kPrefetchWindows[] = {0, 2048, 4096};

// The widest read loop this CPU runs: the probe must not be slower than the kernels it bounds.
SumFn best_sum() { return cpu_simd_level() >= SimdLevel::Avx2 ? sum_words_avx2 : sum_words_baseline; }

}  // namespace

namespace {

// Slices are whole multiples of 4 KiB so each thread owns its own pages.
uint64_t slice_bytes(uint64_t buffer_bytes, int threads) {
    return std::max<uint64_t>(4096, buffer_bytes / static_cast<uint64_t>(threads) / 4096 * 4096);
}

}  // namespace

ReadBandwidthProbe::ReadBandwidthProbe(ThreadPool& pool, uint64_t buffer_bytes)
    : pool_(pool),
      slice_(slice_bytes(buffer_bytes, pool.size())),
      buffer_(slice_ * static_cast<uint64_t>(pool.size())) {
    uint8_t* base = buffer_.data();
    pool.parallel_for(pool.size(), [&](int64_t t0, int64_t t1, int) {
        for (int64_t t = t0; t < t1; ++t) std::memset(base + static_cast<uint64_t>(t) * slice_, static_cast<int>(t + 1), slice_);
    });
}

MemoryBandwidth ReadBandwidthProbe::measure(int passes) {
    const int threads = pool_.size();
    const uint64_t total = slice_ * static_cast<uint64_t>(threads);
    const uint8_t* base = buffer_.data();
    const SumFn sum_words = best_sum();
    std::vector<uint64_t> sums(static_cast<size_t>(threads));
    double best = 0;
    uint64_t best_window = 0;
    for (int pass = 0; pass < passes; ++pass) {
        for (uint64_t window : kPrefetchWindows) {
            auto start = std::chrono::steady_clock::now();
            pool_.parallel_for(threads, [&](int64_t t0, int64_t t1, int) {
                for (int64_t t = t0; t < t1; ++t) {
                    sums[static_cast<size_t>(t)] += sum_words(base + static_cast<uint64_t>(t) * slice_, slice_, window);
                }
            });
            double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (static_cast<double>(total) / secs > best) best = static_cast<double>(total) / secs, best_window = window;
        }
    }
    // The sums go to a volatile sink so the compiler cannot drop the reads.
    uint64_t checksum = 0;
    for (uint64_t s : sums) checksum += s;
    volatile uint64_t sink = checksum;
    (void)sink;
    return MemoryBandwidth{best, total, passes, threads, best_window};
}

MemoryBandwidth measure_read_bandwidth(ThreadPool& pool, uint64_t buffer_bytes, int passes) {
    return ReadBandwidthProbe(pool, buffer_bytes).measure(passes);
}

}  // namespace strata
