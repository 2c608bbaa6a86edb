// AVX2 multi-row dot kernels of Q4_K, Q5_K and Q6_K with a Q8_K activation row
// (quant/cpu/dot_rows.h). Each is the single-row kernel of dot_kquants_avx2.cpp run for R rows side
// by side: each 32-value activation vector is loaded once and used by every row, and each row
// keeps its own integer and float accumulators, updated with exactly the operations of the
// single-row kernel in the same order, so each row's result has the same bits. The loops over
// rows carry `#pragma GCC unroll` so the per-row arrays live in registers: without it GCC 12
// kept them on the stack.

#include <type_traits>

#include "quant/cpu/dot_rows_driver.h"
#include "quant/cpu/dot_rows_kernels_avx2.h"
#include "quant/cpu/kquant_simd_avx2.h"
#include "quant/k_quants.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

using namespace kquant_avx2;

template <class Block, int R>
void row_pointers(const void* weights, uint64_t stride, const Block* (&w)[R]) {
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        w[r] = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(weights) + static_cast<uint64_t>(r) * stride);
    }
}

// Q4_K and Q5_K differ only in the fifth bit, so one body serves both.
template <class Block, int R>
void k4_rows(const void* weights, uint64_t stride, const void* activation, int64_t n, float* out) {
    constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5_K>;
    const Block* w[R];
    row_pointers(weights, stride, w);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    const int64_t nb = super_blocks(n);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i sixteen = _mm256_set1_epi8(16);
    __m256 acc[R], acc_min[R];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        acc[r] = _mm256_setzero_ps();
        acc_min[r] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < nb; ++i) {
        __m256i scales_mins[R], sumi[R];
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            scales_mins[r] = unpack_scales_mins_k4(w[r][i].scales);
            sumi[r] = _mm256_setzero_si256();
        }
        // 32 bytes of quants hold 64 values: sub-block 2k in the low nibbles, 2k+1 in the high;
        // for Q5_K, bit 2k of qh[l] is the fifth bit of sub-block 2k's value l, 2k+1 of 2k+1's.
        #pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
            const __m256i q8_lo = load256(a[i].qs + 64 * k);
            const __m256i q8_hi = load256(a[i].qs + 64 * k + 32);
            const __m256i bit_lo = _mm256_set1_epi8(static_cast<char>(1 << (2 * k)));
            const __m256i bit_hi = _mm256_set1_epi8(static_cast<char>(2 << (2 * k)));
            #pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                const __m256i q = load256(w[r][i].qs + 32 * k);
                __m256i q_lo = _mm256_and_si256(q, nibble);
                __m256i q_hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble);
                if constexpr (kFifthBit) {
                    const __m256i high_bits = load256(w[r][i].qh);
                    q_lo = _mm256_or_si256(
                        q_lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high_bits, bit_lo), bit_lo), sixteen));
                    q_hi = _mm256_or_si256(
                        q_hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high_bits, bit_hi), bit_hi), sixteen));
                }
                sumi[r] = _mm256_add_epi32(sumi[r], scaled_dot(q_lo, q8_lo, scale_k4(scales_mins[r], 2 * k)));
                sumi[r] = _mm256_add_epi32(sumi[r], scaled_dot(q_hi, q8_hi, scale_k4(scales_mins[r], 2 * k + 1)));
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            accumulate_k4(acc[r], acc_min[r], sumi[r], min_sums_k4(scales_mins[r], a[i].bsums),
                          scale_pair_k4(&w[r][i].d, a[i].d));
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]) - hsum(acc_min[r]);
}

template <int R>
void q6_k_rows(const void* weights, uint64_t stride, const void* activation, int64_t n, float* out) {
    const BlockQ6_K* w[R];
    row_pointers(weights, stride, w);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    const int64_t nb = super_blocks(n);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i high_pair = _mm256_set1_epi8(0x30);
    __m256 acc[R];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const __m256i bsums = load256(a[i].bsums);
        __m128i scales[R];
        __m256i sumi[R];
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            scales[r] = load128(w[r][i].scales);
            // Quants are stored as u = q + 32 ∈ [0, 63]; Σ s·q·a = Σ s·u·a − 32·Σ s·Σa.
            const __m256i offset = _mm256_madd_epi16(_mm256_cvtepi8_epi16(scales[r]), bsums);
            sumi[r] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
        }
        #pragma GCC unroll 4
        for (int half = 0; half < 2; ++half) {
            __m256i q8[4];
            #pragma GCC unroll 4
            for (int g = 0; g < 4; ++g) q8[g] = load256(a[i].qs + 128 * half + 32 * g);
            #pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                // Value group g (32 values) takes bits 2g, 2g+1 of qh as its bits 4-5.
                const __m256i ql0 = load256(w[r][i].ql + 64 * half);
                const __m256i ql1 = load256(w[r][i].ql + 64 * half + 32);
                const __m256i qh = load256(w[r][i].qh + 32 * half);
                const __m256i q[4] = {
                    _mm256_or_si256(_mm256_and_si256(ql0, nibble), _mm256_and_si256(_mm256_slli_epi16(qh, 4), high_pair)),
                    _mm256_or_si256(_mm256_and_si256(ql1, nibble), _mm256_and_si256(_mm256_slli_epi16(qh, 2), high_pair)),
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), nibble), _mm256_and_si256(qh, high_pair)),
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), nibble),
                                    _mm256_and_si256(_mm256_srli_epi16(qh, 2), high_pair)),
                };
                #pragma GCC unroll 4
                for (int g = 0; g < 4; ++g) {
                    sumi[r] = _mm256_add_epi32(sumi[r], scaled_dot(q[g], q8[g], pair_scales(scales[r], 4 * half + g)));
                }
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(fp16(w[r][i].d) * a[i].d), _mm256_cvtepi32_ps(sumi[r]), acc[r]);
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]);
}

template <int R>
struct Q4K {
    static void run(const void* w, uint64_t s, const void* a, int64_t n, float* out) { k4_rows<BlockQ4_K, R>(w, s, a, n, out); }
};
template <int R>
struct Q5K {
    static void run(const void* w, uint64_t s, const void* a, int64_t n, float* out) { k4_rows<BlockQ5_K, R>(w, s, a, n, out); }
};
template <int R>
struct Q6K {
    static void run(const void* w, uint64_t s, const void* a, int64_t n, float* out) { q6_k_rows<R>(w, s, a, n, out); }
};

}  // namespace

void dot_rows_q4_k_q8_k_avx2(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q4K>(w, stride, a, n, rows, out);
}
void dot_rows_q5_k_q8_k_avx2(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q5K>(w, stride, a, n, rows, out);
}
// Q6_K's 4-row instance spills many of AVX2's 16 vector registers (measured 0.98x the single-row
// kernel in L2, the 2-row walk 1.05x; bench/results/2026-11-29-dot-rows), so it walks in pairs.
void dot_rows_q6_k_q8_k_avx2(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q6K, 2>(w, stride, a, n, rows, out);
}

}  // namespace strata
