// AVX2 multi-row dot kernels of Q4_K, Q5_K and Q6_K with Q8_K activation rows (quant/cpu/dot_rows.h):
// R weight rows against one activation row, and tiles of rows against up to four activation
// rows. Each is the single-row kernel of dot_kquants_avx2.cpp run for R × T pairs side by side:
// a 32-value activation vector is loaded once for every row, a row's unpacked quants and scales
// are used by every activation row, and each pair keeps its own integer and float accumulators,
// updated with exactly the operations of the single-row kernel in the same order, so each pair's
// result has the same bits. The loops over
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

// R weight rows against T activation rows, out[t * out_stride + r]. Q4_K and Q5_K differ only
// in the fifth bit, so one body serves both. What depends on a row alone (its scales, its quants
// split into nibbles, the scales spread over lanes) is done once for every activation row: for a
// prompt's later tokens (rows in cache) that work is a third of the single-row kernel's.
template <class Block, int R, int T>
void k4_tile(const void* weights, uint64_t stride, const BlockQ8_K* const* a, int64_t n, float* out, int64_t out_stride) {
    constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5_K>;
    const Block* w[R];
    row_pointers(weights, stride, w);
    const int64_t nb = super_blocks(n);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i sixteen = _mm256_set1_epi8(16);
    __m256 acc[R][T], acc_min[R][T];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps(), acc_min[r][t] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < nb; ++i) {
        __m256i scales_mins[R], sumi[R][T];
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            scales_mins[r] = unpack_scales_mins_k4(w[r][i].scales);
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) sumi[r][t] = _mm256_setzero_si256();
        }
        // 32 bytes of quants hold 64 values: sub-block 2k in the low nibbles, 2k+1 in the high;
        // for Q5_K, bit 2k of qh[l] is the fifth bit of sub-block 2k's value l, 2k+1 of 2k+1's.
        #pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
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
                const __m256i scale_lo = scale_k4(scales_mins[r], 2 * k);
                const __m256i scale_hi = scale_k4(scales_mins[r], 2 * k + 1);
                #pragma GCC unroll 4
                for (int t = 0; t < T; ++t) {
                    sumi[r][t] = _mm256_add_epi32(sumi[r][t], scaled_dot(q_lo, a[t][i].qs + 64 * k, scale_lo));
                    sumi[r][t] = _mm256_add_epi32(sumi[r][t], scaled_dot(q_hi, a[t][i].qs + 64 * k + 32, scale_hi));
                }
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                accumulate_k4(acc[r][t], acc_min[r][t], sumi[r][t], min_sums_k4(scales_mins[r], a[t][i].bsums),
                              scale_pair_k4(&w[r][i].d, a[t][i].d));
            }
        }
    }
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]) - hsum(acc_min[r][t]);
    }
}

// R rows against T activation rows, as k4_tile; each row's quants (6 bits from two planes) and
// its scales spread over lanes are built once for every activation row.
template <int R, int T>
void q6_k_tile(const void* weights, uint64_t stride, const BlockQ8_K* const* a, int64_t n, float* out, int64_t out_stride) {
    const BlockQ6_K* w[R];
    row_pointers(weights, stride, w);
    const int64_t nb = super_blocks(n);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i high_pair = _mm256_set1_epi8(0x30);
    __m256 acc[R][T];
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        #pragma GCC unroll 4
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < nb; ++i) {
        __m128i scales[R];
        __m256i sumi[R][T];
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            scales[r] = load128(w[r][i].scales);
            const __m256i scales16 = _mm256_cvtepi8_epi16(scales[r]);
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                // Quants are stored as u = q + 32 ∈ [0, 63]; Σ s·q·a = Σ s·u·a − 32·Σ s·Σa.
                const __m256i offset = _mm256_madd_epi16(scales16, load256(a[t][i].bsums));
                sumi[r][t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offset, 5));
            }
        }
        #pragma GCC unroll 4
        for (int half = 0; half < 2; ++half) {
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
                    const __m256i s = pair_scales(scales[r], 4 * half + g);
                    #pragma GCC unroll 4
                    for (int t = 0; t < T; ++t) {
                        sumi[r][t] = _mm256_add_epi32(sumi[r][t], scaled_dot(q[g], a[t][i].qs + 128 * half + 32 * g, s));
                    }
                }
            }
        }
        #pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            #pragma GCC unroll 4
            for (int t = 0; t < T; ++t) {
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(fp16(w[r][i].d) * a[t][i].d), _mm256_cvtepi32_ps(sumi[r][t]),
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

void dot_rows_q4_k_q8_k_avx2(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q4K>(w, stride, a, n, rows, out);
}
void dot_rows_q5_k_q8_k_avx2(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q5K>(w, stride, a, n, rows, out);
}
void dot_tile_q4_k_q8_k_avx2(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n, int64_t rows,
                             float* out, int64_t out_stride) {
    run_tile<Q4K>(w, stride, a, tokens, n, rows, out, out_stride);
}
void dot_tile_q5_k_q8_k_avx2(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n, int64_t rows,
                             float* out, int64_t out_stride) {
    run_tile<Q5K>(w, stride, a, tokens, n, rows, out, out_stride);
}
void dot_tile_q6_k_q8_k_avx2(const void* w, uint64_t stride, const void* const* a, int64_t tokens, int64_t n, int64_t rows,
                             float* out, int64_t out_stride) {
    run_tile<Q6K>(w, stride, a, tokens, n, rows, out, out_stride);
}
// Q6_K's 4-row instance spills many of AVX2's 16 vector registers (measured 0.98x the single-row
// kernel in L2, the 2-row walk 1.05x; bench/results/2026-11-29-dot-rows), so it walks in pairs.
void dot_rows_q6_k_q8_k_avx2(const void* w, uint64_t stride, const void* a, int64_t n, int64_t rows, float* out) {
    run_rows<Q6K, 2>(w, stride, a, n, rows, out);
}

}  // namespace strata
