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

// Q4_K/Q5_K's 12 packed bytes (layout in get_scale_min_k4, quant/k_quant_search.h) → bytes 0-7:
// the 8 scales, bytes 8-15: the 8 mins, in both 128-bit lanes, so that one in-lane pshufb with
// zeroing turns them into int16 (scale_k4, min_sums_k4). With 32-bit words w0..w2: scales 0-3 =
// w0 & 0x3f, mins 0-3 = w1 & 0x3f, scales 4-7 = (w2 & 0x0f) | ((w0 >> 2) & 0x30), mins 4-7 =
// ((w2 >> 4) & 0x0f) | ((w1 >> 2) & 0x30). Reads 16 bytes (the 4 after `packed` are the block's
// first quants).
inline __m256i unpack_scales_mins_k4(const uint8_t* packed) {
    const __m256i v = _mm256_broadcastsi128_si256(load128(packed));
    const __m256i a = _mm256_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));  // w0 w2 w1 w2
    const __m256i b = _mm256_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));  // w0 w0 w1 w1
    const __m256i low = _mm256_and_si256(_mm256_srlv_epi32(a, _mm256_set_epi32(4, 0, 0, 0, 4, 0, 0, 0)),
                                         _mm256_set_epi32(0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f,
                                                          0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi32(b, 2),
                                          _mm256_set_epi32(0x30303030, 0, 0x30303030, 0, 0x30303030, 0, 0x30303030, 0));
    return _mm256_or_si256(low, high);
}

// Scale j (0..7) of unpack_scales_mins_k4's bytes in every 16-bit lane.
inline __m256i scale_k4(__m256i scales_mins, int j) {
    return _mm256_shuffle_epi8(scales_mins, _mm256_set1_epi16(static_cast<int16_t>(0x8000 + j)));
}

// Σ_j m_j·Σa over sub-block j as 8 int32 lanes (lane j: sub-block j): each min as two equal
// words against bsums 2j and 2j+1 in one madd.
inline __m256i min_sums_k4(__m256i scales_mins, const int16_t* bsums) {
    // Per 128-bit lane, words m0 m0 m1 m1 m2 m2 m3 m3 (m4..m7 above): byte 8+j, a zero (0x80) above.
    const __m256i dup_mins = _mm256_set_epi64x(
        static_cast<long long>(0x800f800f800e800eULL), static_cast<long long>(0x800d800d800c800cULL),
        static_cast<long long>(0x800b800b800a800aULL), static_cast<long long>(0x8009800980088008ULL));
    return _mm256_madd_epi16(load256(bsums), _mm256_shuffle_epi8(scales_mins, dup_mins));
}

// [fp16(d)·ad, fp16(dmin)·ad, ..]: d and dmin are adjacent fp16s, converted together.
inline __m128 scale_pair_k4(const uint16_t* d_dmin, float ad) {
    uint32_t bits;
    std::memcpy(&bits, d_dmin, sizeof(bits));
    return _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(bits))), _mm_set1_ps(ad));
}

// acc += d·Σ, acc_min += dmin·Σmin, for one super-block (the caller returns hsum(acc) − hsum(acc_min)).
inline void accumulate_k4(__m256& acc, __m256& acc_min, __m256i sumi, __m256i min_sums, __m128 d_dmin) {
    acc = _mm256_fmadd_ps(_mm256_broadcastss_ps(d_dmin), _mm256_cvtepi32_ps(sumi), acc);
    acc_min = _mm256_fmadd_ps(_mm256_broadcastss_ps(_mm_movehdup_ps(d_dmin)), _mm256_cvtepi32_ps(min_sums), acc_min);
}

}  // namespace strata::kquant_avx2
