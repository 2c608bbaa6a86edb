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

// Every 16-bit lane = word `j` (0..7) of `words`, whose two 128-bit halves are equal.
inline __m256i broadcast_word(__m256i words, int j) {
    return _mm256_shuffle_epi8(words, _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * j)));
}

// 16 int8 sub-block scales → int16 lanes for 32 values of two 16-value sub-blocks: the low
// 128 bits get scale 2p, the high 128 bits scale 2p + 1.
inline __m256i pair_scales(__m128i scales8, int p) {
    const __m128i pick = _mm_add_epi8(_mm_set1_epi8(static_cast<char>(2 * p)), _mm_set_epi64x(0x0101010101010101, 0));
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales8, pick));
}

// Q4_K/Q5_K's 12 packed bytes → bytes 0-7: the 8 scales, bytes 8-15: the 8 mins (layout in
// get_scale_min_k4, quant/k_quant_search.h), four at a time in 32-bit words.
inline __m128i unpack_scales_mins_k4(const uint8_t* packed) {
    uint32_t w[3];
    std::memcpy(w, packed, sizeof(w));
    const uint32_t scales_lo = w[0] & 0x3f3f3f3f;
    const uint32_t mins_lo = w[1] & 0x3f3f3f3f;
    const uint32_t scales_hi = (w[2] & 0x0f0f0f0f) | ((w[0] >> 2) & 0x30303030);
    const uint32_t mins_hi = ((w[2] >> 4) & 0x0f0f0f0f) | ((w[1] >> 2) & 0x30303030);
    return _mm_set_epi32(static_cast<int>(mins_hi), static_cast<int>(mins_lo), static_cast<int>(scales_hi),
                         static_cast<int>(scales_lo));
}

// Σa of Q4_K/Q5_K's 8 sub-blocks of 32 values (two adjacent 16-value bsums each), as int16. It
// depends on the activation only, so multi-row kernels compute it once for all their rows.
inline __m128i pair_bsums_k4(const int16_t* bsums) {
    const __m256i b = load256(bsums);
    return _mm_hadd_epi16(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

// Σ_sub min·Σa over the 8 sub-blocks, as 4 int32 lanes.
inline __m128i min_products_k4(__m128i scales_mins, __m128i pair_sums) {
    return _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8)), pair_sums);
}
inline __m128i min_products_k4(__m128i scales_mins, const int16_t* bsums) {
    return min_products_k4(scales_mins, pair_bsums_k4(bsums));
}

}  // namespace strata::kquant_avx2
