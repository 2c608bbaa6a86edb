// The bandwidth probe's read loop with AVX2 loads (memory_bandwidth.cpp calls it when the CPU
// has AVX2). Eight independent 256-bit accumulators: 256 bytes per iteration, so eight loads are
// issued back to back and no add waits on another. The baseline loop (plain x86-64 vector code)
// moves 16 bytes per load instruction; on the cores we run on that cannot keep enough cache-line
// requests in flight to saturate DRAM from one thread. The software prefetch a window ahead does
// for the probe what it does for the matmul's streams (backend/cpu/matmul.cpp): on the Xeon's 16
// threads it read 91-111 GB/s against 74-89 without.

#include <immintrin.h>

#include <cstdint>

#include "runtime/memory_bandwidth_kernels.h"

namespace strata {

uint64_t sum_words_avx2(const uint8_t* p, uint64_t bytes, uint64_t prefetch_bytes) {
    constexpr int kLanes = 8;
    constexpr uint64_t kStep = kLanes * sizeof(__m256i);
    __m256i acc[kLanes];
    for (__m256i& a : acc) a = _mm256_setzero_si256();
    const uint64_t n = bytes / kStep;
    for (uint64_t i = 0; i < n; ++i) {
        // Past the end, a prefetch is a hint the CPU drops; it never faults.
        if (prefetch_bytes != 0) {
            for (uint64_t line = 0; line < kStep; line += 64) __builtin_prefetch(p + i * kStep + prefetch_bytes + line, 0, 3);
        }
        const auto* v = reinterpret_cast<const __m256i*>(p + i * kStep);
        for (int k = 0; k < kLanes; ++k) acc[k] = _mm256_add_epi64(acc[k], _mm256_loadu_si256(v + k));
    }
    __m256i s = acc[0];
    for (int k = 1; k < kLanes; ++k) s = _mm256_add_epi64(s, acc[k]);
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace strata
