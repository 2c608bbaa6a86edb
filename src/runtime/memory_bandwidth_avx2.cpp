// The bandwidth probe's read loop with AVX2 loads (memory_bandwidth.cpp calls it when the CPU
// has AVX2). Eight independent 256-bit accumulators: 256 bytes per iteration, so eight loads are
// issued back to back and no add waits on another. The baseline loop (plain x86-64 vector code)
// moves 16 bytes per load instruction; on the cores we run on that cannot keep enough cache-line
// requests in flight to saturate DRAM from one thread.

#include <immintrin.h>

#include <cstdint>

#include "runtime/memory_bandwidth_kernels.h"

namespace strata {

uint64_t sum_words_avx2(const uint8_t* p, uint64_t bytes) {
    constexpr int kLanes = 8;
    __m256i acc[kLanes];
    for (__m256i& a : acc) a = _mm256_setzero_si256();
    const uint64_t n = bytes / (kLanes * sizeof(__m256i));
    for (uint64_t i = 0; i < n; ++i) {
        const auto* v = reinterpret_cast<const __m256i*>(p + i * kLanes * sizeof(__m256i));
        for (int k = 0; k < kLanes; ++k) acc[k] = _mm256_add_epi64(acc[k], _mm256_loadu_si256(v + k));
    }
    __m256i s = acc[0];
    for (int k = 1; k < kLanes; ++k) s = _mm256_add_epi64(s, acc[k]);
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace strata
