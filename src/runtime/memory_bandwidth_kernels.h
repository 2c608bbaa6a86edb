#pragma once
// The read loops of the bandwidth probe (memory_bandwidth.h): each sums `bytes` bytes from `p` as
// 64-bit words (bytes a multiple of 256), so the compiler cannot skip a load, and asks for the
// lines `prefetch_bytes` ahead of its reads (0: none), as the CPU matmul does. Exposed for the
// probe's benchmark (bench/memory_bandwidth_bench.cpp), which compares them.

#include <cstdint>

namespace strata {

// Plain x86-64 (or any target's) vector code; always available.
uint64_t sum_words_baseline(const uint8_t* p, uint64_t bytes, uint64_t prefetch_bytes = 0);
// AVX2 loads (memory_bandwidth_avx2.cpp); call only when cpu_simd_level() >= SimdLevel::Avx2.
uint64_t sum_words_avx2(const uint8_t* p, uint64_t bytes, uint64_t prefetch_bytes = 0);

}  // namespace strata
