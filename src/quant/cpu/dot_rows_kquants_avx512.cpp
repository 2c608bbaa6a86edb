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

// R weight rows against T activation rows, out[t * out_stride + r]. Q4_K and Q5_K differ only
// in the fifth bit, so one body serves both (256-bit registers, as the single-row kernel). A
// row's unpacked scales, its nibbles and its scales spread over lanes serve every activation row.
template <class Block, int R, int T>
void k4_tile(const void* weights, uint64_t stride, const BlockQ8_K* const* a, int64_t n, float* out, int64_t out_stride) {
    constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5_K>;
    const Block* w[R];
    row_pointers(weights, stride, w);
    const int64_t nb = super_blocks(n);
    __m256 acc[R][T], acc_min[R][T];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps(), acc_min[r][t] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < nb; ++i) {
        __m256i sm[R];
        __m256i qh[R], even[R][T], odd[R][T];
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            sm[r] = unpack_scales_mins_k4(w[r][i].scales);
            if constexpr (kFifthBit) qh[r] = load256(w[r][i].qh);
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) even[r][t] = _mm256_setzero_si256(), odd[r][t] = _mm256_setzero_si256();
        }
        #pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
            #pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                __m256i lo, hi;
                nibbles_k4(w[r][i].qs + 32 * k, &lo, &hi);
                if constexpr (kFifthBit) {
                    lo = add_fifth_bit(lo, qh[r], 2 * k);
                    hi = add_fifth_bit(hi, qh[r], 2 * k + 1);
                }
                const __m256i scales = pair_scales_k4(sm[r], k);
                #pragma GCC unroll 4
                for (int t = 0; t < T; ++t) {
                    __m256i& sum = k % 2 ? odd[r][t] : even[r][t];
                    sum = add_scaled_pair_k4(sum, lo, hi, a[t][i].qs + 64 * k, scales);
                }
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                accumulate_k4(acc[r][t], acc_min[r][t], _mm256_add_epi32(even[r][t], odd[r][t]),
                              min_sums_k4(sm[r], a[t][i].bsums), scale_pair_k4(&w[r][i].d, a[t][i].d));
            }
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]) - hsum(acc_min[r][t]);
    }
}

// R rows against T activation rows, as k4_tile; each row's 6-bit quants and its scales serve
// every activation row.
template <int R, int T>
void q6_k_tile(const void* weights, uint64_t stride, const BlockQ8_K* const* a, int64_t n, float* out, int64_t out_stride) {
    const BlockQ6_K* w[R];
    row_pointers(weights, stride, w);
    const int64_t nb = super_blocks(n);
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    const __m512i high_pair = _mm512_set1_epi8(0x30);
    __m256 acc[R][T];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < nb; ++i) {
        __m512i scales[R], sumi[R][T];
        __m256i offset[R][T];
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const __m256i scales16 = _mm256_cvtepi8_epi16(load128(w[r][i].scales));
            scales[r] = _mm512_castsi256_si512(scales16);
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                // Quants are stored as u = q + 32 ∈ [0, 63]; Σ s·q·a = Σ s·u·a − 32·Σ s·Σa.
                offset[r][t] = _mm256_slli_epi32(_mm256_madd_epi16(scales16, load256(a[t][i].bsums)), 5);
                sumi[r][t] = _mm512_setzero_si512();
            }
        }
        #pragma GCC unroll 4
        for (int half = 0; half < 2; ++half) {
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
                const __m512i scales01 = quad_scales(scales[r], 8 * half);
                const __m512i scales23 = quad_scales(scales[r], 8 * half + 4);
                #pragma GCC unroll 4
                for (int t = 0; t < T; ++t) {
                    sumi[r][t] = add_scaled_dot(sumi[r][t], q01, a[t][i].qs + 128 * half, scales01);
                    sumi[r][t] = add_scaled_dot(sumi[r][t], q23, a[t][i].qs + 128 * half + 64, scales23);
                }
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                const __m256i total = _mm256_sub_epi32(
                    _mm256_add_epi32(_mm512_castsi512_si256(sumi[r][t]), _mm512_extracti64x4_epi64(sumi[r][t], 1)),
                    offset[r][t]);
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(fp16(w[r][i].d) * a[t][i].d), _mm256_cvtepi32_ps(total),
                                            acc[r][t]);
            }
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]);
    }
}

// Kernel<R, T>::run for the drivers of quant/cpu/dot_rows_driver.h.
template <int R, int T>
struct Q4K {
    static void run(const void* w, uint64_t s, const BlockQ8_K* const* a, int64_t n, float* out, int64_t os) {
        k4_tile<BlockQ4_K, R, T>(w, s, a, n, out, os);
    }
};
template <int R, int T>
struct Q5K {
    static void run(const void* w, uint64_t s, const BlockQ8_K* const* a, int64_t n, float* out, int64_t os) {
        k4_tile<BlockQ5_K, R, T>(w, s, a, n, out, os);
    }
};
template <int R, int T>
struct Q6K {
    static void run(const void* w, uint64_t s, const BlockQ8_K* const* a, int64_t n, float* out, int64_t os) {
        q6_k_tile<R, T>(w, s, a, n, out, os);
    }
};

}  // namespace

void dot_rows_q4_k_q8_k_avx512(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q4K>(w, stride, a, n, rows, out);
}
void dot_rows_q5_k_q8_k_avx512(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q5K>(w, stride, a, n, rows, out);
}
void dot_tile_q4_k_q8_k_avx512(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n,
                               int64_t rows, float* out, int64_t out_stride) {
    run_tile<Q4K>(w, stride, a, tokens, n, rows, out, out_stride);
}
void dot_tile_q5_k_q8_k_avx512(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n,
                               int64_t rows, float* out, int64_t out_stride) {
    run_tile<Q5K>(w, stride, a, tokens, n, rows, out, out_stride);
}
void dot_tile_q6_k_q8_k_avx512(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n,
                               int64_t rows, float* out, int64_t out_stride) {
    run_tile<Q6K>(w, stride, a, tokens, n, rows, out, out_stride);
}
// Q6_K's 4-row instance needs more than the 32 vector registers (measured 0.9x the single-row
// kernel in L2, the 2-row walk 1.06x; bench/results/2026-11-29-dot-rows), so it walks in pairs.
void dot_rows_q6_k_q8_k_avx512(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q6K, 2>(w, stride, a, n, rows, out);
}

}  // namespace strata
