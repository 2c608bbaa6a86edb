#pragma once
// The machine's multi-threaded DRAM read bandwidth, measured on the spot: every thread of a pool
// sums its slice of a buffer far larger than the last-level cache, with AVX2 loads where the CPU
// has them (memory_bandwidth_avx2.cpp: the 16-byte baseline loop under-reported by 1.2-1.8x on a
// 16-core Xeon, bench/results/2026-11-29-dot-rows), without and with a software prefetch ahead
// (as the matmul streams), and the best of a few passes counts. Decode
// of a big model reads every weight it uses once per token, so bandwidth divided by bytes per
// token is the speed a memory-bound decode cannot beat (`strata bench` prints the ratio).
//
//   ThreadPool pool(ThreadPool::Options{.threads = 16});
//   MemoryBandwidth bw = measure_read_bandwidth(pool);
//   double bound_tok_s = bw.bytes_per_second / bytes_per_token;

#include <cstdint>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"

namespace strata {

struct MemoryBandwidth {
    double bytes_per_second = 0;  // best pass
    uint64_t buffer_bytes = 0;
    int passes = 0;
    int threads = 0;
    uint64_t prefetch_bytes = 0;  // the best pass's prefetch window (0: none)
};

// 1 GiB is several times any last-level cache we run on (the device's Xeon has ~100 MB), so the
// sums stream from DRAM. The buffer is written once by the pool's own threads before timing, so
// its pages are faulted in and, on NUMA machines, local to the threads that read them.
MemoryBandwidth measure_read_bandwidth(ThreadPool& pool, uint64_t buffer_bytes = uint64_t(1) << 30, int passes = 5);

// The same probe kept ready for repeated measurements (a pass before and after each repetition of
// a benchmark): the buffer is allocated and written once, each measure() only reads it.
class ReadBandwidthProbe {
public:
    explicit ReadBandwidthProbe(ThreadPool& pool, uint64_t buffer_bytes = uint64_t(1) << 30);
    MemoryBandwidth measure(int passes);

private:
    ThreadPool& pool_;
    uint64_t slice_;  // bytes each thread reads
    AlignedBuffer buffer_;
};

}  // namespace strata
