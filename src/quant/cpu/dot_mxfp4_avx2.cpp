// AVX2 dot kernel of MXFP4 (quant/mxfp4.h) with a Q8_0 activation row. The E2M1 codes become
// their doubled integer values through one byte shuffle (a 16-entry table fits a register),
// so a block's sum is an exact int8 dot product, scaled once by 2^(e−128)·d_a as in the scalar
// reference.

#include <immintrin.h>

#include <bit>

#include "core/check.h"
#include "quant/cpu/dot_kernels_avx2.h"
#include "quant/legacy.h"
#include "quant/mxfp4.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % 32 == 0, "MXFP4 rows hold a multiple of 32 values");
    return n / 32;
}

// 2^(e − 128): the block scale halved because the table values are doubled. e = 0 and 1 give
// float subnormals, built by bits (as quant/mxfp4.cpp does).
float half_scale(uint8_t e) {
    const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
    return std::bit_cast<float>(bits);
}

float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

}  // namespace

float dot_mxfp4_q8_0_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockMxfp4*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    // E2M1 {0, 0.5, 1, 1.5, 2, 3, 4, 6} and negatives, doubled; in both 128-bit halves.
    const __m256i values =
        _mm256_broadcastsi128_si256(_mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12));
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    const __m256i ones = _mm256_set1_epi16(1);
    // d·Σ q·a of block i, added to `acc`.
    auto add_block = [&](int64_t i, __m256 acc) {
        const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].qs));
        // Low nibbles are values 0-15, high nibbles 16-31: the activation's order.
        const __m256i ordered = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(codes, 4), codes), nibble);
        const __m256i q = _mm256_shuffle_epi8(values, ordered);
        const __m256i q8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].qs));
        // |q|·(a·sign q): exact, |q| ≤ 12 and Q8_0 quants are never −128.
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(q8, q));
        const __m256i sumi = _mm256_madd_epi16(pairs, ones);
        const float d = _cvtsh_ss(a[i].d) * half_scale(w[i].e);
        return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    };
    // Two accumulators: one block's work is about one fused multiply-add's latency.
    __m256 acc0 = _mm256_setzero_ps();
    __m256 acc1 = _mm256_setzero_ps();
    const int64_t nb = block_count(n);
    int64_t i = 0;
    for (; i + 1 < nb; i += 2) {
        acc0 = add_block(i, acc0);
        acc1 = add_block(i + 1, acc1);
    }
    if (i < nb) acc0 = add_block(i, acc0);
    return hsum(_mm256_add_ps(acc0, acc1));
}

}  // namespace strata
