// AVX2 dot kernels of the symmetric legacy formats (quant/legacy.h) with a Q8_0 activation row:
// Q8_0, Q4_0 and Q5_0. Per 32-value block the integer sum is exact; it is converted once and
// multiplied by d_w·d_a, as the scalar references do, with the float sums in a different order.
//
// Signed × signed bytes go through _mm256_maddubs_epi16 (unsigned × signed) by moving the
// weight's sign onto the activation: |w|·(a·sign w). That is exact as long as a ≠ −128, which
// quantize_row_q8_0 never produces (its quants are round(x/d) with d = max|x|/127).

#include <immintrin.h>

#include <cstring>

#include "core/check.h"
#include "quant/cpu/dot_kernels_avx2.h"
#include "quant/legacy.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % 32 == 0, "legacy quant rows hold a multiple of 32 values");
    return n / 32;
}

float fp16(uint16_t h) { return _cvtsh_ss(h); }

float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Σ w·a over 32 signed bytes, as 8 int32 lanes of 4 products each.
__m256i dot_signed(__m256i w, __m256i a) {
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// 16 bytes of nibbles → 32 values: low nibbles first (values 0-15), then high (16-31).
__m256i unpack_nibbles(const uint8_t* qs) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(x, 4), x), _mm256_set1_epi8(0x0F));
}

// Bit j of `bits` → byte j, 0xFF when set.
__m256i bits_to_bytes(uint32_t bits) {
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                                               _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                                                 0x0101010101010101, 0));
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

// Σ over blocks of d(i)·Σ_int(i), `sums(i)` giving block i's integer sums as 8 int32 lanes.
// Two accumulators: a block takes ~4 cycles of work, as long as one fused multiply-add's
// latency, so a single accumulator chain would be the bottleneck.
template <typename Sums, typename Scale>
float sum_blocks(int64_t nb, Sums sums, Scale scale) {
    __m256 acc0 = _mm256_setzero_ps();
    __m256 acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 1 < nb; i += 2) {
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(scale(i)), _mm256_cvtepi32_ps(sums(i)), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(scale(i + 1)), _mm256_cvtepi32_ps(sums(i + 1)), acc1);
    }
    if (i < nb) acc0 = _mm256_fmadd_ps(_mm256_set1_ps(scale(i)), _mm256_cvtepi32_ps(sums(i)), acc0);
    return hsum(_mm256_add_ps(acc0, acc1));
}

}  // namespace

float dot_q8_0_q8_0_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ8_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    return sum_blocks(
        block_count(n),
        [w, a](int64_t i) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i].qs));
            return dot_signed(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].qs)));
        },
        [w, a](int64_t i) { return fp16(w[i].d) * fp16(a[i].d); });
}

float dot_q4_0_q8_0_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ4_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    return sum_blocks(
        block_count(n),
        [w, a](int64_t i) {
            const __m256i q = _mm256_sub_epi8(unpack_nibbles(w[i].qs), _mm256_set1_epi8(8));
            return dot_signed(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].qs)));
        },
        [w, a](int64_t i) { return fp16(w[i].d) * fp16(a[i].d); });
}

float dot_q5_0_q8_0_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ5_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    return sum_blocks(
        block_count(n),
        [w, a](int64_t i) {
            uint32_t qh;
            std::memcpy(&qh, w[i].qh, sizeof(qh));
            const __m256i sixteen = _mm256_set1_epi8(16);
            const __m256i high = _mm256_and_si256(bits_to_bytes(qh), sixteen);
            const __m256i q = _mm256_sub_epi8(_mm256_or_si256(unpack_nibbles(w[i].qs), high), sixteen);
            return dot_signed(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].qs)));
        },
        [w, a](int64_t i) { return fp16(w[i].d) * fp16(a[i].d); });
}

}  // namespace strata
