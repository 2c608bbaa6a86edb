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

// ---- Q4_K / Q5_K (dot_kquants_avx512.cpp, dot_rows_kquants_avx512.cpp) ----
// These run on 256-bit registers (AVX-512VL encodings of VNNI): a 32-value sub-block is one
// register, so scales need only in-lane shuffles. On Zen 4, where a 512-bit op costs two 256-bit
// ones, the 256-bit form alone was 1.14x the former 512-bit kernel in L2; with the vector scale
// unpack and the paired scaling below, 1.45x (Q5_K 1.35x; bench/results/2026-11-29-cpu-q4k).
// Not yet measured on the device's Xeon, whose 512-bit kernel was port-5 bound.

// Q4_K/Q5_K helpers both ISAs share (AVX2 + F16C + FMA only), compiled in this namespace with
// this file's target flags.
#include "quant/cpu/kquant_k4_shared.inc"

// Sub-blocks 2k and 2k+1 of 32 packed bytes: the low and the high nibbles. Q5_K's fifth bits
// (bit j of qh byte l: sub-block j, value l) are then added as 16 where set.
inline void nibbles_k4(const uint8_t* packed, __m256i* lo, __m256i* hi) {
    const __m256i q = load256(packed);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    *lo = _mm256_and_si256(q, nibble);
    *hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble);
}
inline __m256i add_fifth_bit(__m256i q, __m256i qh, int j) {
    const __mmask32 set = _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(1 << j)));
    return _mm256_mask_add_epi8(q, set, q, _mm256_set1_epi8(16));
}

// acc + Σ scale·q·a over sub-blocks 2k (`lo`) and 2k+1 (`hi`), 32 values each against the 64
// activations at `a`; `scales` from pair_scales_k4. dpbusd sums four products per int32 lane
// (|sum| ≤ 4·31·128, so it fits int16); packs puts both sub-blocks in one register of words (per
// 128-bit lane: 4 words of 2k, then 4 of 2k+1), and one dpwssd applies both scales. Against a
// maddubs + dpwssd per sub-block this needs half the scale shuffles and 3 multiplies instead of 4
// (1.08x on Zen 4).
inline __m256i add_scaled_pair_k4(__m256i acc, __m256i lo, __m256i hi, const int8_t* a, __m256i scales) {
    const __m256i zero = _mm256_setzero_si256();
    const __m256i sums =
        _mm256_packs_epi32(_mm256_dpbusd_epi32(zero, lo, load256(a)), _mm256_dpbusd_epi32(zero, hi, load256(a + 32)));
    return _mm256_dpwssd_epi32(acc, sums, scales);
}
// The words add_scaled_pair_k4 scales sub-blocks 2k and 2k+1 by, from unpack_scales_mins_k4's
// bytes: s_2k ×4 then s_2k+1 ×4 per 128-bit lane (byte 2k or 2k+1 with a zero, 0x80, above it).
inline __m256i pair_scales_k4(__m256i scales_mins, int k) {
    const long long even = static_cast<long long>(0x8000800080008000ULL) + 0x0002000200020002LL * k;
    const long long odd = even + 0x0001000100010001LL;
    return _mm256_shuffle_epi8(scales_mins, _mm256_set_epi64x(odd, even, odd, even));
}

}  // namespace strata::kquant_avx512
