#pragma once
// The read loops of the bandwidth probe (memory_bandwidth.h): each sums `bytes` bytes from `p` as
// 64-bit words (bytes a multiple of 256), so the compiler cannot skip a load. Exposed for the
// probe's benchmark (bench/memory_bandwidth_bench.cpp), which compares them.

#include <cstdint>

namespace strata {

// Plain x86-64 (or any target's) vector code; always available.
uint64_t sum_words_baseline(const uint8_t* p, uint64_t bytes);
// AVX2 loads (memory_bandwidth_avx2.cpp); call only when cpu_simd_level() >= SimdLevel::Avx2.
uint64_t sum_words_avx2(const uint8_t* p, uint64_t bytes);

}  // namespace strata
