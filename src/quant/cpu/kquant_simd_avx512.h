#pragma once
// Helpers shared by the AVX-512 K-quant dot kernels: the single-row ones (dot_kquants_avx512.cpp)
// and the multi-row ones (dot_rows_kquants_avx512.cpp). Sharing them, rather than keeping two
// copies, is what keeps the two kernels' lanes and rounding identical. Include only from files
// compiled for avx512 (*_avx512.cpp); the namespace keeps these inline functions apart from the
// avx2 helpers of the same names, which are compiled for another instruction set.

// GCC 12's AVX-512 intrinsics self-initialise their "undefined" vectors (`__Y = __Y`), which
// -Wuninitialized reports at every inlined use (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>
#include <cstring>

#include "core/check.h"

namespace strata::kquant_avx512 {

inline int64_t super_blocks(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "K-quant rows hold a multiple of 256 values");
    return n / 256;
}

inline float fp16(uint16_t h) { return _cvtsh_ss(h); }

inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }
inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// [lo, hi] as one 512-bit register.
inline __m512i join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }

// acc + Σ scale·q·a over 64 values: `q` unsigned (≤ 63), `a` the 64 activations, `scales` one
// int16 per pair lane.
inline __m512i add_scaled_dot(__m512i acc, __m512i q, __m512i a, __m512i scales) {
    return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(q, a), scales);
}
inline __m512i add_scaled_dot(__m512i acc, __m512i q, const int8_t* a, __m512i scales) {
    return add_scaled_dot(acc, q, load512(a), scales);
}

// Scales of four 16-value sub-blocks first, first+1, .. first+3: 128-bit lane i of the result
// holds word first+i of `words` (16 int16 in the low 256 bits).
inline __m512i quad_scales(__m512i words, int first) {
    const __m512i lane = _mm512_set_epi64(0x0003000300030003, 0x0003000300030003, 0x0002000200020002,
                                          0x0002000200020002, 0x0001000100010001, 0x0001000100010001, 0, 0);
    return _mm512_permutexvar_epi16(_mm512_add_epi16(lane, _mm512_set1_epi16(static_cast<int16_t>(first))), words);
}

// 64 four-bit values from 32 packed bytes: the low nibbles in the low 256 bits, the high nibbles
// in the high 256 bits (Q4_K/Q5_K keep sub-block 2k in the low and 2k+1 in the high nibbles).
// Built from a broadcast load and a per-lane shift (0 below, 4 above) rather than a shift and a
// vinserti64x4: on Intel cores the insert competes for port 5 with the scale permutes, and the
// Q4_K kernel is bound there (1.08x in L2 on the device's Xeon; same speed on Zen 4). Same bytes
// either way, so results keep their bits.
inline __m512i nibbles64(const uint8_t* packed) {
    const __m512i shifts = _mm512_set_epi64(0x0004000400040004, 0x0004000400040004, 0x0004000400040004,
                                            0x0004000400040004, 0, 0, 0, 0);
    const __m512i both = _mm512_srlv_epi16(_mm512_broadcast_i64x4(load256(packed)), shifts);
    return _mm512_and_si512(both, _mm512_set1_epi8(0x0F));
}

// The 8 int16 scales of Q4_K/Q5_K's 32-value sub-blocks in every 128-bit lane, for
// pair_scales_k4.
inline __m512i lane_scales_k4(__m128i scales_mins) { return _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(scales_mins)); }

// The scales of sub-blocks 2k (low 256 bits) and 2k+1 (high 256 bits) for nibbles64's layout,
// by one in-lane byte shuffle of lane_scales_k4 rather than a vpermw across the register (port 5
// again; with nibbles64, 1.12x in L2 on the Xeon).
inline __m512i pair_scales_k4(__m512i lane_scales, int k) {
    const long long lo = 0x0100010001000100LL + 0x0404040404040404LL * k;  // bytes 4k, 4k+1: word 2k
    const long long hi = lo + 0x0202020202020202LL;                         // word 2k+1
    return _mm512_shuffle_epi8(lane_scales, _mm512_set_epi64(hi, hi, hi, hi, lo, lo, lo, lo));
}

// Sum of the 16 int32 lanes' two halves, as 8 float lanes.
inline __m256 halves_to_float(__m512i sumi) {
    return _mm256_cvtepi32_ps(_mm256_add_epi32(_mm512_castsi512_si256(sumi), _mm512_extracti64x4_epi64(sumi, 1)));
}

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
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

}  // namespace strata::kquant_avx512
