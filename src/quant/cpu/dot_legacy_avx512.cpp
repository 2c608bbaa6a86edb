// AVX-512 (VNNI) dot kernels of the symmetric legacy formats (quant/legacy.h) with a Q8_0
// activation row: Q8_0, Q4_0 and Q5_0. Two 32-value blocks fill one 512-bit register; VNNI's
// _mm512_dpbusd_epi32 multiplies unsigned × signed bytes and sums each four into int32, so a
// block's integer sum is 8 lanes, converted once and scaled by d_w·d_a (the low 8 lanes by the
// first block's, the high 8 by the second's). An odd last block runs with a zero second half.
//
// Signed weights become |w| with the sign moved onto the activation, exact because
// quantize_row_q8_0 never produces −128 (its quants are round(x/d), d = max|x|/127).

// GCC 12's AVX-512 intrinsics self-initialise their "undefined" vectors (`__Y = __Y`), which
// -Wuninitialized reports at every inlined use (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstring>

#include "core/check.h"
#include "quant/cpu/dot_kernels_avx512.h"
#include "quant/legacy.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % 32 == 0, "legacy quant rows hold a multiple of 32 values");
    return n / 32;
}

float fp16(uint16_t h) { return _cvtsh_ss(h); }

__m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Blocks i and i+1 of a row (or block i and zeros when i is the last).
template <typename Load>
__m512i pair_of_blocks(int64_t i, int64_t nb, Load load) {
    const __m512i first = _mm512_zextsi256_si512(load(i));
    return i + 1 < nb ? _mm512_inserti64x4(first, load(i + 1), 1) : first;
}

// Per-lane scale: d0 for the low 8 int32 lanes, d1 for the high 8.
__m512 pair_scale(float d0, float d1) {
    return _mm512_insertf32x8(_mm512_set1_ps(d0), _mm256_set1_ps(d1), 1);
}

// Σ w·a over signed bytes, four per int32 lane.
__m512i dot_signed(__m512i w, __m512i a) {
    const __mmask64 negative = _mm512_movepi8_mask(w);
    const __m512i a_signed = _mm512_mask_sub_epi8(a, negative, _mm512_setzero_si512(), a);
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(w), a_signed);
}

float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }

// 16 bytes of nibbles → 32 values: low nibbles first (values 0-15), then high (16-31).
__m256i unpack_nibbles(const uint8_t* qs) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(x, 4), x), _mm256_set1_epi8(0x0F));
}

// Shared loop: `weights_of(i)` gives block i's 32 signed values, `scale_of(i)` its d_w.
template <typename Weights, typename Scale>
float dot_with_q8_0(const BlockQ8_0* a, int64_t nb, Weights weights_of, Scale scale_of) {
    auto activation_of = [a](int64_t i) { return load256(a[i].qs); };
    // Blocks i and i+1 added to `acc`.
    auto add_pair = [&](int64_t i, __m512 acc) {
        const __m512i sumi = dot_signed(pair_of_blocks(i, nb, weights_of), pair_of_blocks(i, nb, activation_of));
        const float d0 = scale_of(i) * fp16(a[i].d);
        const float d1 = i + 1 < nb ? scale_of(i + 1) * fp16(a[i + 1].d) : 0.0f;
        return _mm512_fmadd_ps(pair_scale(d0, d1), _mm512_cvtepi32_ps(sumi), acc);
    };
    // Two accumulators, so that the fused multiply-add latency is not a chain through every pair.
    __m512 acc0 = _mm512_setzero_ps();
    __m512 acc1 = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; i += 4) {
        acc0 = add_pair(i, acc0);
        if (i + 2 < nb) acc1 = add_pair(i + 2, acc1);
    }
    return hsum(_mm512_add_ps(acc0, acc1));
}

}  // namespace

float dot_q8_0_q8_0_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ8_0*>(weights);
    return dot_with_q8_0(
        static_cast<const BlockQ8_0*>(activation), block_count(n), [w](int64_t i) { return load256(w[i].qs); },
        [w](int64_t i) { return fp16(w[i].d); });
}

float dot_q4_0_q8_0_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ4_0*>(weights);
    return dot_with_q8_0(
        static_cast<const BlockQ8_0*>(activation), block_count(n),
        [w](int64_t i) { return _mm256_sub_epi8(unpack_nibbles(w[i].qs), _mm256_set1_epi8(8)); },
        [w](int64_t i) { return fp16(w[i].d); });
}

float dot_q5_0_q8_0_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ5_0*>(weights);
    // Bit j of qh is the fifth bit of value j: the mask register takes it as is.
    auto values = [w](int64_t i) {
        uint32_t qh;
        std::memcpy(&qh, w[i].qh, sizeof(qh));
        const __m256i low = unpack_nibbles(w[i].qs);
        const __m256i sixteen = _mm256_set1_epi8(16);
        return _mm256_sub_epi8(_mm256_mask_add_epi8(low, qh, low, sixteen), sixteen);
    };
    return dot_with_q8_0(static_cast<const BlockQ8_0*>(activation), block_count(n), values,
                         [w](int64_t i) { return fp16(w[i].d); });
}

}  // namespace strata
