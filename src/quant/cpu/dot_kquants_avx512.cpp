// AVX-512 (VNNI) dot kernels of the K-quant formats (quant/k_quants.h) with a Q8_K activation
// row. Same arithmetic as the AVX2 kernels (dot_kquants_avx2.cpp): unsigned quants × int8
// activations with maddubs (pairs as int16, never saturating for quants ≤ 63), then the
// sub-block scale as int16 with VNNI's _mm512_dpwssd_epi32, which multiplies, pairs and
// accumulates into int32 in one instruction. One 512-bit register covers 64 values, i.e. four
// 16-value sub-blocks, whose scales _mm512_permutexvar_epi16 spreads. Q4_K/Q5_K instead run on
// 256-bit registers, one 32-value sub-block each, with dpbusd and one dpwssd per two sub-blocks
// (kquant_simd_avx512.h says why).
// Offsets (Q3_K's −4, Q6_K's −32) and minimums use Q8_K's bsums, as in the AVX2 file.

#include <array>
#include <cstring>
#include <type_traits>

#include "quant/cpu/dot_kernels_avx512.h"
#include "quant/cpu/dot_rows_driver.h"
#include "quant/cpu/dot_rows_kernels_avx512.h"
#include "quant/cpu/kquant_simd_avx512.h"
#include "quant/k_quants.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

using namespace kquant_avx512;  // shared with the multi-row kernels

// Q3_K's 16 six-bit scales (layout in quant/q3_k.cpp, stored_scale) → 16 int8, 32 subtracted.
__m128i unpack_scales_q3_k(const uint8_t* packed) {
    uint32_t w[3];
    std::memcpy(w, packed, sizeof(w));
    const uint32_t s0 = (w[0] & 0x0f0f0f0f) | ((w[2] << 4) & 0x30303030);
    const uint32_t s1 = (w[1] & 0x0f0f0f0f) | ((w[2] << 2) & 0x30303030);
    const uint32_t s2 = ((w[0] >> 4) & 0x0f0f0f0f) | (w[2] & 0x30303030);
    const uint32_t s3 = ((w[1] >> 4) & 0x0f0f0f0f) | ((w[2] >> 2) & 0x30303030);
    const __m128i stored = _mm_set_epi32(static_cast<int>(s3), static_cast<int>(s2), static_cast<int>(s1),
                                         static_cast<int>(s0));
    return _mm_sub_epi8(stored, _mm_set1_epi8(32));
}

// Q2_K/Q3_K's 2-bit planes of one 128-value half, as 64-value registers in activation order:
// byte l at bit shift 2g holds value 32g + l.
void unpack_planes(const uint8_t* qs, __m512i* q01, __m512i* q23) {
    const __m256i planes = load256(qs);
    const __m512i pair = join(planes, _mm256_srli_epi16(planes, 2));
    const __m512i two_bits = _mm512_set1_epi8(3);
    *q01 = _mm512_and_si512(pair, two_bits);
    *q23 = _mm512_and_si512(_mm512_srli_epi16(pair, 4), two_bits);
}

}  // namespace

namespace {

// Q2_K and Q3_K against T activation rows at once (T = 1: the single-row kernels below; more:
// tiles, quant/cpu/dot_rows.h): a row's scales and 2-bit planes are unpacked once for all of
// them, and each activation row keeps its own accumulators, so each (row, token) has the bits
// of the single-row kernel. out[t * out_stride]. Always inlined: the single-row kernels, called
// through it, measured 1-4% slower as a call.
template <int T>
[[gnu::always_inline]] inline void q2_k_tile(const void* weights, const BlockQ8_K* const* a, int64_t n, float* out, int64_t out_stride) {
    const auto* w = static_cast<const BlockQ2_K*>(weights);
    __m256 acc[T], acc_min[T];
    #pragma GCC unroll 4
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps(), acc_min[t] = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m128i packed = load128(w[i].scales);
        const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F)));
        const __m512i scales =
            _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_and_si128(packed, _mm_set1_epi8(0x0F))));
        __m512i sumi[T];
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) sumi[t] = _mm512_setzero_si512();
        for (int half = 0; half < 2; ++half) {
            __m512i q01, q23;
            unpack_planes(w[i].qs + 32 * half, &q01, &q23);
            const __m512i s01 = quad_scales(scales, 8 * half);
            const __m512i s23 = quad_scales(scales, 8 * half + 4);
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                const int8_t* q8 = a[t][i].qs + 128 * half;
                sumi[t] = add_scaled_dot(sumi[t], q01, q8, s01);
                sumi[t] = add_scaled_dot(sumi[t], q23, q8 + 64, s23);
            }
        }
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            const __m256i min_sum = _mm256_madd_epi16(mins, load256(a[t][i].bsums));
            const float d = fp16(w[i].d) * a[t][i].d;
            const float dmin = fp16(w[i].dmin) * a[t][i].d;
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d), halves_to_float(sumi[t]), acc[t]);
            acc_min[t] = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(min_sum), acc_min[t]);
        }
    }
    #pragma GCC unroll 4
    for (int t = 0; t < T; ++t) out[t * out_stride] = hsum(acc[t]) - hsum(acc_min[t]);
}

template <int T>
[[gnu::always_inline]] inline void q3_k_tile(const void* weights, const BlockQ8_K* const* a, int64_t n, float* out, int64_t out_stride) {
    const auto* w = static_cast<const BlockQ3_K*>(weights);
    const __m512i four = _mm512_set1_epi8(4);
    __m256 acc[T];
    #pragma GCC unroll 4
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m256i scales16 = _mm256_cvtepi8_epi16(unpack_scales_q3_k(w[i].scales));
        const __m512i scales = _mm512_castsi256_si512(scales16);
        // Quants are taken as u = q + 4 ∈ [0, 7]; Σ s·q·a = Σ s·u·a − 4·Σ s·Σa.
        __m256i offset[T];
        __m512i sumi[T];
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            offset[t] = _mm256_slli_epi32(_mm256_madd_epi16(scales16, load256(a[t][i].bsums)), 2);
            sumi[t] = _mm512_setzero_si512();
        }
        // Bit 4h+g of hmask[l] is the high bit of value 128h + 32g + l; the upper half of
        // `high` is shifted by one so that one bit test serves groups g and g+1.
        const __m256i hmask = load256(w[i].hmask);
        const __m512i high = join(hmask, _mm256_srli_epi16(hmask, 1));
        for (int half = 0; half < 2; ++half) {
            __m512i q01, q23;
            unpack_planes(w[i].qs + 32 * half, &q01, &q23);
            const __mmask64 h01 = _mm512_test_epi8_mask(high, _mm512_set1_epi8(static_cast<char>(1 << (4 * half))));
            const __mmask64 h23 = _mm512_test_epi8_mask(high, _mm512_set1_epi8(static_cast<char>(4 << (4 * half))));
            q01 = _mm512_mask_add_epi8(q01, h01, q01, four);
            q23 = _mm512_mask_add_epi8(q23, h23, q23, four);
            const __m512i s01 = quad_scales(scales, 8 * half);
            const __m512i s23 = quad_scales(scales, 8 * half + 4);
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                const int8_t* q8 = a[t][i].qs + 128 * half;
                sumi[t] = add_scaled_dot(sumi[t], q01, q8, s01);
                sumi[t] = add_scaled_dot(sumi[t], q23, q8 + 64, s23);
            }
        }
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            const __m256i total = _mm256_sub_epi32(
                _mm256_add_epi32(_mm512_castsi512_si256(sumi[t]), _mm512_extracti64x4_epi64(sumi[t], 1)), offset[t]);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(fp16(w[i].d) * a[t][i].d), _mm256_cvtepi32_ps(total), acc[t]);
        }
    }
    #pragma GCC unroll 4
    for (int t = 0; t < T; ++t) out[t * out_stride] = hsum(acc[t]);
}

#include "quant/cpu/kquant_low_walks.inc"

}  // namespace

float dot_q2_k_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    float out = 0.0f;
    Q2K<1, 1>::run(weights, 0, one_row(activation).data(), n, &out, 0);
    return out;
}

float dot_q3_k_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    float out = 0.0f;
    Q3K<1, 1>::run(weights, 0, one_row(activation).data(), n, &out, 0);
    return out;
}

// The tables' entries (dot_rows_table_avx512.cpp): rows one at a time, tiles of up to four tokens.
void dot_rows_q2_k_q8_k_avx512(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q2K, 1>(w, stride, a, n, rows, out);
}
void dot_rows_q3_k_q8_k_avx512(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q3K, 1>(w, stride, a, n, rows, out);
}
void dot_tile_q2_k_q8_k_avx512(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n,
                               int64_t rows, float* out, int64_t out_stride) {
    run_tile<Q2K>(w, stride, a, tokens, n, rows, out, out_stride);
}
void dot_tile_q3_k_q8_k_avx512(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n,
                               int64_t rows, float* out, int64_t out_stride) {
    run_tile<Q3K>(w, stride, a, tokens, n, rows, out, out_stride);
}

namespace {

// Q4_K and Q5_K differ only in the fifth bit, so one body serves both. The integer sums of the
// four 64-value steps alternate between two accumulators so that consecutive dpwssd do not wait
// on each other; the multi-row kernel (dot_rows_kquants_avx512.cpp) does the same
// operations in the same order, so its rows have the same bits.
template <class Block>
float k4_dot(const void* weights, const void* activation, int64_t n) {
    constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5_K>;
    const auto* w = static_cast<const Block*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m256 acc = _mm256_setzero_ps();
    __m256 acc_min = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m256i sm = unpack_scales_mins_k4(w[i].scales);
        __m256i qh;
        if constexpr (kFifthBit) qh = load256(w[i].qh);
        __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
        for (int k = 0; k < 4; ++k) {
            __m256i lo, hi;
            nibbles_k4(w[i].qs + 32 * k, &lo, &hi);
            if constexpr (kFifthBit) {
                lo = add_fifth_bit(lo, qh, 2 * k);
                hi = add_fifth_bit(hi, qh, 2 * k + 1);
            }
            __m256i& sum = k % 2 ? odd : even;
            sum = add_scaled_pair_k4(sum, lo, hi, a[i].qs + 64 * k, pair_scales_k4(sm, k));
        }
        accumulate_k4(acc, acc_min, _mm256_add_epi32(even, odd), min_sums_k4(sm, a[i].bsums),
                      scale_pair_k4(&w[i].d, a[i].d));
    }
    return hsum(acc) - hsum(acc_min);
}

}  // namespace

float dot_q4_k_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    return k4_dot<BlockQ4_K>(weights, activation, n);
}

float dot_q5_k_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    return k4_dot<BlockQ5_K>(weights, activation, n);
}

float dot_q6_k_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ6_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    const __m512i high_pair = _mm512_set1_epi8(0x30);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m256i scales16 = _mm256_cvtepi8_epi16(load128(w[i].scales));
        const __m512i scales = _mm512_castsi256_si512(scales16);
        // Quants are stored as u = q + 32 ∈ [0, 63]; Σ s·q·a = Σ s·u·a − 32·Σ s·Σa.
        const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(scales16, load256(a[i].bsums)), 5);
        __m512i sumi = _mm512_setzero_si512();
        for (int half = 0; half < 2; ++half) {
            // ql: low nibbles are values 0-63 of the half, high nibbles 64-127. qh byte l: bits
            // 2g, 2g+1 are bits 4-5 of value 32g + l; shifted so they land on 0x30.
            const __m512i ql = load512(w[i].ql + 64 * half);
            const __m256i qh = load256(w[i].qh + 32 * half);
            const __m512i high01 =
                _mm512_and_si512(join(_mm256_slli_epi16(qh, 4), _mm256_slli_epi16(qh, 2)), high_pair);
            const __m512i high23 = _mm512_and_si512(join(qh, _mm256_srli_epi16(qh, 2)), high_pair);
            const __m512i q01 = _mm512_or_si512(_mm512_and_si512(ql, nibble), high01);
            const __m512i q23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), nibble), high23);
            const int8_t* q8 = a[i].qs + 128 * half;
            sumi = add_scaled_dot(sumi, q01, q8, quad_scales(scales, 8 * half));
            sumi = add_scaled_dot(sumi, q23, q8 + 64, quad_scales(scales, 8 * half + 4));
        }
        const __m256i total = _mm256_sub_epi32(
            _mm256_add_epi32(_mm512_castsi512_si256(sumi), _mm512_extracti64x4_epi64(sumi, 1)), offset);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(w[i].d) * a[i].d), _mm256_cvtepi32_ps(total), acc);
    }
    return hsum(acc);
}

}  // namespace strata
