#pragma once
// Plain data shared by the AVX2 and AVX-512 IQ dot kernels (dot_iq_avx2.cpp, dot_iq_avx512.cpp).
// Only constexpr tables here, no functions: a function in a header included by both would be
// compiled twice with different instruction sets, and the linker could keep the AVX-512 copy for
// the AVX2 caller.
//
//   __m256i signs = _mm256_set_epi64x(..., kIq2SignsPm1[code0]);   // ±1 per byte
//   __m256i q = _mm256_sign_epi8(q8, signs);                       // q8 negated where the weight is

#include <array>
#include <bit>
#include <cstdint>

namespace strata::iq_simd {

// kIq2SignTable (quant/iq_grids.h) expanded to one byte per value: 0x01 for +, 0xFF (−1) for −,
// value j in byte j. The 8th sign is the parity of the 7 stored ones (an even count of negatives).
// Built here rather than from kIq2SignTable so that it is a compile-time constant.
inline constexpr std::array<uint64_t, 128> kIq2SignsPm1 = [] {
    std::array<uint64_t, 128> t{};
    for (uint32_t s7 = 0; s7 < 128; ++s7) {
        const uint32_t mask = s7 | ((std::popcount(s7) & 1u) << 7);
        uint64_t bytes = 0;
        for (int j = 0; j < 8; ++j) bytes |= uint64_t{((mask >> j) & 1u) ? 0xFFu : 0x01u} << (8 * j);
        t[s7] = bytes;
    }
    return t;
}();

}  // namespace strata::iq_simd
