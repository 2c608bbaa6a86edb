// AVX-512 (VNNI) multi-row dot kernels of Q4_K, Q5_K and Q6_K with a Q8_K activation row
// (quant/cpu/dot_rows.h). Each is the single-row kernel of dot_kquants_avx512.cpp run for R rows
// side by side: the activations are loaded once and used by every row, and each row keeps its own
// integer and float accumulators, updated with exactly the operations of the single-row kernel in
// the same order, so each row's result has the same bits. The loops over rows carry `#pragma GCC
// unroll` so the per-row arrays live in registers: without it GCC 12 kept them on the stack.

#include <type_traits>

#include "quant/cpu/dot_rows_driver.h"
#include "quant/cpu/dot_rows_kernels_avx512.h"
#include "quant/cpu/kquant_simd_avx512.h"
#include "quant/k_quants.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

using namespace kquant_avx512;

template <class Block, int R>
void row_pointers(const void* weights, uint64_t stride, const Block* (&w)[R]) {
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        w[r] = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(weights) + static_cast<uint64_t>(r) * stride);
    }
}

// Q4_K and Q5_K differ only in the fifth bit, so one body serves both (256-bit registers, as
// the single-row kernel).
template <class Block, int R>
void k4_rows(const void* weights, uint64_t stride, const void* activation, int64_t n, float* out) {
    constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5_K>;
    const Block* w[R];
    row_pointers(weights, stride, w);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    const int64_t nb = super_blocks(n);
    __m256 acc[R], acc_min[R];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        acc[r] = _mm256_setzero_ps();
        acc_min[r] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < nb; ++i) {
        __m256i sm[R];
        __m256i qh[R], even[R], odd[R];
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            sm[r] = unpack_scales_mins_k4(w[r][i].scales);
            if constexpr (kFifthBit) qh[r] = load256(w[r][i].qh);
            even[r] = _mm256_setzero_si256();
            odd[r] = _mm256_setzero_si256();
        }
        #pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
            const int8_t* q8 = a[i].qs + 64 * k;
            #pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                __m256i lo, hi;
                nibbles_k4(w[r][i].qs + 32 * k, &lo, &hi);
                if constexpr (kFifthBit) {
                    lo = add_fifth_bit(lo, qh[r], 2 * k);
                    hi = add_fifth_bit(hi, qh[r], 2 * k + 1);
                }
                __m256i& sum = k % 2 ? odd[r] : even[r];
                sum = add_scaled_pair_k4(sum, lo, hi, q8, sm[r], k);
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            accumulate_k4(acc[r], acc_min[r], _mm256_add_epi32(even[r], odd[r]), min_sums_k4(sm[r], a[i].bsums),
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
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    const __m512i high_pair = _mm512_set1_epi8(0x30);
    __m256 acc[R];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const __m256i bsums = load256(a[i].bsums);
        __m512i scales[R], sumi[R];
        __m256i offset[R];
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const __m256i scales16 = _mm256_cvtepi8_epi16(load128(w[r][i].scales));
            scales[r] = _mm512_castsi256_si512(scales16);
            // Quants are stored as u = q + 32 ∈ [0, 63]; Σ s·q·a = Σ s·u·a − 32·Σ s·Σa.
            offset[r] = _mm256_slli_epi32(_mm256_madd_epi16(scales16, bsums), 5);
            sumi[r] = _mm512_setzero_si512();
        }
        #pragma GCC unroll 4
        for (int half = 0; half < 2; ++half) {
            const __m512i q8_01 = load512(a[i].qs + 128 * half);
            const __m512i q8_23 = load512(a[i].qs + 128 * half + 64);
            #pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                // Bit layout as in the single-row kernel (dot_kquants_avx512.cpp).
                const __m512i ql = load512(w[r][i].ql + 64 * half);
                const __m256i qh = load256(w[r][i].qh + 32 * half);
                const __m512i high01 =
                    _mm512_and_si512(join(_mm256_slli_epi16(qh, 4), _mm256_slli_epi16(qh, 2)), high_pair);
                const __m512i high23 = _mm512_and_si512(join(qh, _mm256_srli_epi16(qh, 2)), high_pair);
                const __m512i q01 = _mm512_or_si512(_mm512_and_si512(ql, nibble), high01);
                const __m512i q23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), nibble), high23);
                sumi[r] = add_scaled_dot(sumi[r], q01, q8_01, quad_scales(scales[r], 8 * half));
                sumi[r] = add_scaled_dot(sumi[r], q23, q8_23, quad_scales(scales[r], 8 * half + 4));
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const __m256i total = _mm256_sub_epi32(
                _mm256_add_epi32(_mm512_castsi512_si256(sumi[r]), _mm512_extracti64x4_epi64(sumi[r], 1)), offset[r]);
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(fp16(w[r][i].d) * a[i].d), _mm256_cvtepi32_ps(total), acc[r]);
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

void dot_rows_q4_k_q8_k_avx512(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q4K>(w, stride, a, n, rows, out);
}
void dot_rows_q5_k_q8_k_avx512(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q5K>(w, stride, a, n, rows, out);
}
// Q6_K's 4-row instance needs more than the 32 vector registers (measured 0.9x the single-row
// kernel in L2, the 2-row walk 1.06x; bench/results/2026-11-29-dot-rows), so it walks in pairs.
void dot_rows_q6_k_q8_k_avx512(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q6K, 2>(w, stride, a, n, rows, out);
}

}  // namespace strata
