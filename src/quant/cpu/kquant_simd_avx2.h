#pragma once
// Helpers shared by the AVX2 K-quant dot kernels: the single-row ones (dot_kquants_avx2.cpp) and
// the multi-row ones (dot_rows_kquants_avx2.cpp). Sharing them, rather than keeping two copies,
// is what keeps the two kernels' lanes and rounding identical. Include only from files compiled
// for avx2 (*_avx2.cpp); the namespace keeps these inline functions apart from the avx512
// helpers of the same names, which are compiled for another instruction set.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "core/check.h"

namespace strata::kquant_avx2 {

inline int64_t super_blocks(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "K-quant rows hold a multiple of 256 values");
    return n / 256;
}

inline float fp16(uint16_t h) { return _cvtsh_ss(h); }

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Σ scale·q·a over 32 values: `q` unsigned (≤ 63), `a` int8, `scales` one int16 per pair lane.
inline __m256i scaled_dot(__m256i q, __m256i a, __m256i scales) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(q, a), scales);
}
inline __m256i scaled_dot(__m256i q, const int8_t* a, __m256i scales) { return scaled_dot(q, load256(a), scales); }

// 16 int8 sub-block scales → int16 lanes for 32 values of two 16-value sub-blocks: the low
// 128 bits get scale 2p, the high 128 bits scale 2p + 1.
inline __m256i pair_scales(__m128i scales8, int p) {
    const __m128i pick = _mm_add_epi8(_mm_set1_epi8(static_cast<char>(2 * p)), _mm_set_epi64x(0x0101010101010101, 0));
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales8, pick));
}

// ---- Q4_K / Q5_K (dot_kquants_avx2.cpp, dot_rows_kquants_avx2.cpp) ----
// The per-super-block work besides the quants is kept in vector registers: unpacking the scales
// with scalar code and moving them over (vmovd/vpinsrd), two separate fp16 converts, and a
// 4-lane min sum built with hadd cost about a third of the AVX-512 kernel's time, which shares
// this design (kquant_simd_avx512.h; bench/results/2026-11-29-cpu-q4k).

// Q4_K/Q5_K helpers both ISAs share (AVX2 + F16C + FMA only), compiled in this namespace with
// this file's target flags.
#include "quant/cpu/kquant_k4_shared.inc"

// Scale j (0..7) of unpack_scales_mins_k4's bytes in every 16-bit lane.
inline __m256i scale_k4(__m256i scales_mins, int j) {
    return _mm256_shuffle_epi8(scales_mins, _mm256_set1_epi16(static_cast<int16_t>(0x8000 + j)));
}



}  // namespace strata::kquant_avx2
