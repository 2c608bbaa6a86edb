// AVX2 dot kernels of the K-quant formats (quant/k_quants.h) with a Q8_K activation row. They
// compute the number the scalar references in quant/q*_k.cpp compute, in the same two steps:
// an integer sum per 256-value super-block (exact, so any order), then one float multiply-add
// by the block's d·a.d. Only the float summation over super-blocks is ordered differently.
//
// The integer step is the same for every type: unsigned quants × signed activations with
// _mm256_maddubs_epi16 (pairs of products as int16; the largest quant, 63, times |a| ≤ 128
// never saturates), then _mm256_madd_epi16 with the sub-block scale as int16, giving int32.
// Formats with an offset (Q3_K's −4, Q6_K's −32) or a minimum (Q2_K, Q4_K, Q5_K) keep their
// quants unsigned and subtract offset·scale·Σa, where Σa per 16 values is Q8_K's bsums.

#include <array>
#include <cstring>

#include "quant/cpu/dot_kernels_avx2.h"
#include "quant/cpu/dot_rows_driver.h"
#include "quant/cpu/dot_rows_kernels_avx2.h"
#include "quant/cpu/kquant_simd_avx2.h"
#include "quant/k_quants.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

using namespace kquant_avx2;  // shared with the multi-row kernels

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
    const __m256i two_bits = _mm256_set1_epi8(3);
    __m256 acc[T], acc_min[T];
    #pragma GCC unroll 4
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps(), acc_min[t] = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m128i packed = load128(w[i].scales);
        const __m128i scales = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
        const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F)));
        __m256i sumi[T], min_sum[T];
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) sumi[t] = _mm256_setzero_si256(), min_sum[t] = _mm256_madd_epi16(mins, load256(a[t][i].bsums));
        for (int half = 0; half < 2; ++half) {
            const __m256i planes = load256(w[i].qs + 32 * half);
            for (int g = 0; g < 4; ++g) {
                const __m256i q = _mm256_and_si256(_mm256_srli_epi16(planes, 2 * g), two_bits);
                const __m256i s = pair_scales(scales, 4 * half + g);
                #pragma GCC unroll 4
                for (int t = 0; t < T; ++t) sumi[t] = _mm256_add_epi32(sumi[t], scaled_dot(q, a[t][i].qs + 128 * half + 32 * g, s));
            }
        }
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            const float d = fp16(w[i].d) * a[t][i].d;
            const float dmin = fp16(w[i].dmin) * a[t][i].d;
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
            acc_min[t] = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(min_sum[t]), acc_min[t]);
        }
    }
    #pragma GCC unroll 4
    for (int t = 0; t < T; ++t) out[t * out_stride] = hsum(acc[t]) - hsum(acc_min[t]);
}

template <int T>
[[gnu::always_inline]] inline void q3_k_tile(const void* weights, const BlockQ8_K* const* a, int64_t n, float* out, int64_t out_stride) {
    const auto* w = static_cast<const BlockQ3_K*>(weights);
    const __m256i two_bits = _mm256_set1_epi8(3);
    const __m256i four = _mm256_set1_epi8(4);
    __m256 acc[T];
    #pragma GCC unroll 4
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m128i scales = unpack_scales_q3_k(w[i].scales);
        const __m256i scales16 = _mm256_cvtepi8_epi16(scales);
        // Quants are stored as u = q + 4 ∈ [0, 7]; Σ s·q·a = Σ s·u·a − 4·Σ s·Σa.
        __m256i sumi[T];
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            const __m256i offset = _mm256_madd_epi16(scales16, load256(a[t][i].bsums));
            sumi[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 2));
        }
        const __m256i hmask = load256(w[i].hmask);
        __m256i bit = _mm256_set1_epi8(1);
        for (int half = 0; half < 2; ++half) {
            const __m256i planes = load256(w[i].qs + 32 * half);
            #pragma GCC unroll 4
            for (int g = 0; g < 4; ++g) {
                const __m256i low = _mm256_and_si256(_mm256_srli_epi16(planes, 2 * g), two_bits);
                const __m256i high = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hmask, bit), bit), four);
                bit = _mm256_add_epi8(bit, bit);
                const __m256i q = _mm256_or_si256(low, high);
                const __m256i s = pair_scales(scales, 4 * half + g);
                #pragma GCC unroll 4
                for (int t = 0; t < T; ++t) sumi[t] = _mm256_add_epi32(sumi[t], scaled_dot(q, a[t][i].qs + 128 * half + 32 * g, s));
            }
        }
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(fp16(w[i].d) * a[t][i].d), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
        }
    }
    #pragma GCC unroll 4
    for (int t = 0; t < T; ++t) out[t * out_stride] = hsum(acc[t]);
}

#include "quant/cpu/kquant_low_walks.inc"

}  // namespace

float dot_q2_k_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    float out = 0.0f;
    Q2K<1, 1>::run(weights, 0, one_row(activation).data(), n, &out, 0);
    return out;
}

float dot_q3_k_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    float out = 0.0f;
    Q3K<1, 1>::run(weights, 0, one_row(activation).data(), n, &out, 0);
    return out;
}

// The tables' entries (dot_rows_table_avx2.cpp): rows one at a time, tiles of up to four tokens.
void dot_rows_q2_k_q8_k_avx2(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q2K, 1>(w, stride, a, n, rows, out);
}
void dot_rows_q3_k_q8_k_avx2(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q3K, 1>(w, stride, a, n, rows, out);
}
void dot_tile_q2_k_q8_k_avx2(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n, int64_t rows,
                             float* out, int64_t out_stride) {
    run_tile<Q2K>(w, stride, a, tokens, n, rows, out, out_stride);
}
void dot_tile_q3_k_q8_k_avx2(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n, int64_t rows,
                             float* out, int64_t out_stride) {
    run_tile<Q3K>(w, stride, a, tokens, n, rows, out, out_stride);
}

float dot_q4_k_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ4_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    __m256 acc_min = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m256i scales_mins = unpack_scales_mins_k4(w[i].scales);
        __m256i sumi = _mm256_setzero_si256();
        // 32 bytes of quants hold 64 values: sub-block 2k in the low nibbles, 2k+1 in the high.
        for (int k = 0; k < 4; ++k) {
            const __m256i q = load256(w[i].qs + 32 * k);
            const int8_t* q8 = a[i].qs + 64 * k;
            sumi = _mm256_add_epi32(sumi, scaled_dot(_mm256_and_si256(q, nibble), q8, scale_k4(scales_mins, 2 * k)));
            sumi = _mm256_add_epi32(sumi, scaled_dot(_mm256_and_si256(_mm256_srli_epi16(q, 4), nibble), q8 + 32,
                                                     scale_k4(scales_mins, 2 * k + 1)));
        }
        accumulate_k4(acc, acc_min, sumi, min_sums_k4(scales_mins, a[i].bsums), scale_pair_k4(&w[i].d, a[i].d));
    }
    return hsum(acc) - hsum(acc_min);
}

float dot_q5_k_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ5_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i sixteen = _mm256_set1_epi8(16);
    __m256 acc = _mm256_setzero_ps();
    __m256 acc_min = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m256i scales_mins = unpack_scales_mins_k4(w[i].scales);
        const __m256i high_bits = load256(w[i].qh);
        __m256i bit = _mm256_set1_epi8(1);
        __m256i sumi = _mm256_setzero_si256();
        for (int k = 0; k < 4; ++k) {
            const __m256i q = load256(w[i].qs + 32 * k);
            const int8_t* q8 = a[i].qs + 64 * k;
            // Bit 2k of qh[l] is the fifth bit of sub-block 2k's value l, bit 2k+1 of 2k+1's.
            const __m256i high_lo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high_bits, bit), bit), sixteen);
            bit = _mm256_add_epi8(bit, bit);
            const __m256i high_hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high_bits, bit), bit), sixteen);
            bit = _mm256_add_epi8(bit, bit);
            const __m256i q_lo = _mm256_or_si256(_mm256_and_si256(q, nibble), high_lo);
            const __m256i q_hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), nibble), high_hi);
            sumi = _mm256_add_epi32(sumi, scaled_dot(q_lo, q8, scale_k4(scales_mins, 2 * k)));
            sumi = _mm256_add_epi32(sumi, scaled_dot(q_hi, q8 + 32, scale_k4(scales_mins, 2 * k + 1)));
        }
        accumulate_k4(acc, acc_min, sumi, min_sums_k4(scales_mins, a[i].bsums), scale_pair_k4(&w[i].d, a[i].d));
    }
    return hsum(acc) - hsum(acc_min);
}

float dot_q6_k_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ6_K*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i high_pair = _mm256_set1_epi8(0x30);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m128i scales = load128(w[i].scales);
        // Quants are stored as u = q + 32 ∈ [0, 63]; Σ s·q·a = Σ s·u·a − 32·Σ s·Σa.
        const __m256i offset = _mm256_madd_epi16(_mm256_cvtepi8_epi16(scales), load256(a[i].bsums));
        __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
        for (int half = 0; half < 2; ++half) {
            const __m256i ql0 = load256(w[i].ql + 64 * half);
            const __m256i ql1 = load256(w[i].ql + 64 * half + 32);
            const __m256i qh = load256(w[i].qh + 32 * half);
            // Value group g (32 values) takes bits 2g, 2g+1 of qh as its bits 4-5.
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(ql0, nibble), _mm256_and_si256(_mm256_slli_epi16(qh, 4), high_pair)),
                _mm256_or_si256(_mm256_and_si256(ql1, nibble), _mm256_and_si256(_mm256_slli_epi16(qh, 2), high_pair)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), nibble), _mm256_and_si256(qh, high_pair)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), nibble),
                                _mm256_and_si256(_mm256_srli_epi16(qh, 2), high_pair)),
            };
            const int8_t* q8 = a[i].qs + 128 * half;
            for (int g = 0; g < 4; ++g) {
                sumi = _mm256_add_epi32(sumi, scaled_dot(q[g], q8 + 32 * g, pair_scales(scales, 4 * half + g)));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum(acc);
}

}  // namespace strata
