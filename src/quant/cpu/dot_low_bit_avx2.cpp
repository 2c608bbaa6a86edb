// AVX2 dot kernels of the 64- and 128-value formats with a Q8_0 activation row: Q1_0 (sign bits,
// quant/q1_0.h), Q2_0 (2-bit codes, quant/q2_0.h) and NVFP4 (E2M1 codes under E4M3 scales,
// quant/nvfp4.h). Each sum over one Q8_0 block (or NVFP4 sub-block) is an exact int8 dot product,
// scaled once; only the float summation order differs from the scalar reference.

#include <immintrin.h>

#include <cstring>

#include "core/check.h"
#include "quant/cpu/dot_kernels_avx2.h"
#include "quant/cpu/kquant_simd_avx2.h"
#include "quant/legacy.h"
#include "quant/nvfp4.h"
#include "quant/q1_0.h"
#include "quant/q2_0.h"

namespace strata {

namespace {

int64_t block_count(int64_t n, int values, const char* message) {
    STRATA_CHECK(n % values == 0, message);
    return n / values;
}

using kquant_avx2::hsum;
using kquant_avx2::load256;

// Σ w·a over 32 byte lanes as 8 int32 sums, w ∈ [−12, 12] and a a Q8_0 quant (never −128):
// |w|·(a·sign w) keeps maddubs' unsigned operand non-negative and its pairs inside int16.
__m256i dot_i8(__m256i w, __m256i a) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w)),
                             _mm256_set1_epi16(1));
}

}  // namespace

float dot_q1_0_q8_0_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ1_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    // Byte p of Q8_0 block k's 32 lanes tests bit p % 8 of the block's byte 4k + p / 8 (both
    // 128-bit lanes hold the 16 bytes of bits, so each lane picks its own two bytes).
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i pick[4] = {spread, _mm256_add_epi8(spread, _mm256_set1_epi8(4)),
                             _mm256_add_epi8(spread, _mm256_set1_epi8(8)), _mm256_add_epi8(spread, _mm256_set1_epi8(12))};
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
    const __m256i one = _mm256_set1_epi8(1);
    const __m256i ones16 = _mm256_set1_epi16(1);
    __m256 acc0 = _mm256_setzero_ps();
    __m256 acc1 = _mm256_setzero_ps();
    for (int64_t i = 0, nb = block_count(n, 128, "Q1_0 rows hold a multiple of 128 values"); i < nb; ++i) {
        const float d = _cvtsh_ss(w[i].d);
        const __m256i bits = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].qs)));
        // Σ ±a over Q8_0 block k: the sign is +1 where the bit is set, −1 where it is clear.
        auto block_sum = [&](int k) {
            const __m256i bytes = _mm256_shuffle_epi8(bits, pick[k]);
            const __m256i sign =
                _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), _mm256_setzero_si256()), one);
            const __m256i signed_a = _mm256_sign_epi8(load256(a[4 * i + k].qs), sign);
            return _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(one, signed_a), ones16));
        };
        for (int k = 0; k < 4; k += 2) {
            acc0 = _mm256_fmadd_ps(_mm256_set1_ps(d * _cvtsh_ss(a[4 * i + k].d)), block_sum(k), acc0);
            acc1 = _mm256_fmadd_ps(_mm256_set1_ps(d * _cvtsh_ss(a[4 * i + k + 1].d)), block_sum(k + 1), acc1);
        }
    }
    return hsum(_mm256_add_ps(acc0, acc1));
}

float dot_q2_0_q8_0_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ2_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    // Value p of a Q8_0 block is code p % 4 of byte p / 4. Each byte goes to its four lanes
    // (`spread`), keeps there only its code's two bits (`field`: bits 2(p % 4)), and those bits,
    // in the low nibble for p % 4 < 2 and in the high one otherwise, are looked up as the level
    // code − 1 (`level`: nibble values 0-3 are codes at bits 0-1, 4/8/12 codes 1-3 at bits 2-3).
    // Two shuffles per 32 values, against ten for unpacking and interleaving the four bit planes.
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,  //
                                            4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7);
    const __m256i field = _mm256_set1_epi32(static_cast<int>(0xC0300C03u));
    const __m256i level = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(-1, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0));
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    // Levels of values 32k .. 32k + 31 of block b.
    auto levels = [&](const BlockQ2_0& b, int k) {
        int64_t bytes = 0;
        std::memcpy(&bytes, b.qs + 8 * k, sizeof(bytes));
        const __m256i bits = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi64x(bytes), spread), field);
        const __m256i index = _mm256_or_si256(_mm256_and_si256(bits, nibble), _mm256_and_si256(_mm256_srli_epi16(bits, 4), nibble));
        return _mm256_shuffle_epi8(level, index);
    };
    __m256 acc0 = _mm256_setzero_ps();
    __m256 acc1 = _mm256_setzero_ps();
    for (int64_t i = 0, nb = block_count(n, 64, "Q2_0 rows hold a multiple of 64 values"); i < nb; ++i) {
        const __m256i s0 = dot_i8(levels(w[i], 0), load256(a[2 * i].qs));
        const __m256i s1 = dot_i8(levels(w[i], 1), load256(a[2 * i + 1].qs));
        const float d = _cvtsh_ss(w[i].d);
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(d * _cvtsh_ss(a[2 * i].d)), _mm256_cvtepi32_ps(s0), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(d * _cvtsh_ss(a[2 * i + 1].d)), _mm256_cvtepi32_ps(s1), acc1);
    }
    return hsum(_mm256_add_ps(acc0, acc1));
}

float dot_nvfp4_q8_0_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockNvfp4*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    // E2M1 {0, 0.5, 1, 1.5, 2, 3, 4, 6} and negatives, doubled; in both 128-bit halves.
    const __m256i values =
        _mm256_broadcastsi128_si256(_mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12));
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    __m256 acc0 = _mm256_setzero_ps();
    __m256 acc1 = _mm256_setzero_ps();
    for (int64_t i = 0, nb = block_count(n, 64, "NVFP4 rows hold a multiple of 64 values"); i < nb; ++i) {
        // Lane 0 holds sub-blocks 0-1 (qs 0-15), lane 1 sub-blocks 2-3. Low nibbles of a
        // sub-block's 8 bytes are its values 0-7, high nibbles 8-15: per lane, unpacking the
        // 64-bit halves gives x = sub-blocks (0 | 2) and y = (1 | 3) in value order.
        const __m256i c = load256(w[i].qs);
        const __m256i lo = _mm256_and_si256(c, nibble);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(c, 4), nibble);
        const __m256i x = _mm256_shuffle_epi8(values, _mm256_unpacklo_epi64(lo, hi));
        const __m256i y = _mm256_shuffle_epi8(values, _mm256_unpackhi_epi64(lo, hi));
        // The activation in the same arrangement: Q8_0 block 0 is sub-blocks 0-1, block 1 is 2-3.
        const __m256i a0 = load256(a[2 * i].qs), a1 = load256(a[2 * i + 1].qs);
        const __m256i ax = _mm256_permute2x128_si256(a0, a1, 0x20);
        const __m256i ay = _mm256_permute2x128_si256(a0, a1, 0x31);
        const float da0 = _cvtsh_ss(a[2 * i].d), da1 = _cvtsh_ss(a[2 * i + 1].d);
        const __m256 dx = _mm256_setr_m128(_mm_set1_ps(da0 * kUe4m3Half[w[i].d[0]]), _mm_set1_ps(da1 * kUe4m3Half[w[i].d[2]]));
        const __m256 dy = _mm256_setr_m128(_mm_set1_ps(da0 * kUe4m3Half[w[i].d[1]]), _mm_set1_ps(da1 * kUe4m3Half[w[i].d[3]]));
        acc0 = _mm256_fmadd_ps(dx, _mm256_cvtepi32_ps(dot_i8(x, ax)), acc0);
        acc1 = _mm256_fmadd_ps(dy, _mm256_cvtepi32_ps(dot_i8(y, ay)), acc1);
    }
    return hsum(_mm256_add_ps(acc0, acc1));
}

}  // namespace strata
