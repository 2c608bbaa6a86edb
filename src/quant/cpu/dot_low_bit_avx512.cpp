// AVX-512 (BW, VNNI) dot kernels of Q1_0, Q2_0 and NVFP4 (quant/q1_0.h, q2_0.h, nvfp4.h) with a
// Q8_0 activation row, 64 values per 512-bit register. Q1_0's sign bits are a mask register as
// they are stored; Q2_0's two bit planes and NVFP4's sign bits become masks by byte tests; the
// byte sums are VNNI's _mm512_dpbusd_epi32 (unsigned weight bytes times signed activations).

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
#include "quant/cpu/kquant_simd_avx512.h"
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

__m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// The quants of two consecutive Q8_0 blocks, 64 activation values.
__m512i load_pair(const BlockQ8_0* a) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(load256(a[0].qs)), load256(a[1].qs), 1);
}

// Q1_0 and Q2_0 sum their integers per Q8_0 block before any float work, so that the scales of
// eight Q8_0 blocks are converted and applied in one vector each.
//
// Four pair sums d0..d3 (16 int32 each: lanes 0-7 meet one Q8_0 block, the "low" one, lanes
// 8-15 the next, "high") to the eight block totals [low(d0), low(d1), low(d2), low(d3),
// high(d0), high(d1), high(d2), high(d3)].
__m256i block_totals(__m512i d0, __m512i d1, __m512i d2, __m512i d3) {
    // Per 128-bit lane L: [Σ d0 over L, Σ d1 over L, Σ d2 over L, Σ d3 over L].
    const __m512i s01 = _mm512_add_epi32(_mm512_unpacklo_epi32(d0, d1), _mm512_unpackhi_epi32(d0, d1));
    const __m512i s23 = _mm512_add_epi32(_mm512_unpacklo_epi32(d2, d3), _mm512_unpackhi_epi32(d2, d3));
    const __m512i lanes = _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23), _mm512_unpackhi_epi64(s01, s23));
    // Low blocks are lanes 0 and 1, high blocks lanes 2 and 3: [L0, L2, L1, L3], then halves added.
    const __m512i ordered = _mm512_shuffle_i64x2(lanes, lanes, _MM_SHUFFLE(3, 1, 2, 0));
    return _mm256_add_epi32(_mm512_castsi512_si256(ordered), _mm512_extracti64x4_epi64(ordered, 1));
}

// Eight fp16 scales at the given byte offsets from `base`, as floats (one gather of 32-bit words
// whose low halves are the scales; every offset + 4 stays inside the blocks read).
__m256 gather_fp16(const void* base, __m256i byte_offsets) {
    const __m256i words = _mm256_i32gather_epi32(static_cast<const int*>(base), byte_offsets, 1);
    return _mm256_cvtph_ps(_mm256_cvtepi32_epi16(words));
}

using kquant_avx512::hsum;

// d_w·(d_low·Σ low + d_high·Σ high) for one pair sum: the tail of a row.
float pair_total(__m512i sums, float d_w, float d_low, float d_high) {
    return d_w * (d_low * static_cast<float>(_mm512_mask_reduce_add_epi32(0x00FF, sums)) +
                  d_high * static_cast<float>(_mm512_mask_reduce_add_epi32(0xFF00, sums)));
}

// Byte offsets of Q8_0 blocks 0, 2, 4, 6, 1, 3, 5, 7 (34 bytes each): the order of block_totals
// for pairs of consecutive blocks.
__m256i q8_0_scale_offsets() { return _mm256_setr_epi32(0, 68, 136, 204, 34, 102, 170, 238); }

// quant/nvfp4.h's ue4m3_half for 16 scale bytes (one per int32 lane), by the same bits: exponent
// e = bits 3-6 and mantissa m = bits 0-2 give (1 + m/8)·2^(e − 8), or m·2^−10 when e = 0; the byte
// 0x7F (E4M3's NaN) gives 0.
__m512 ue4m3_half_x16(__m512i bytes) {
    const __m512i exp = _mm512_and_si512(_mm512_srli_epi32(bytes, 3), _mm512_set1_epi32(0xF));
    const __m512i man = _mm512_and_si512(bytes, _mm512_set1_epi32(0x7));
    const __m512i normal = _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(exp, _mm512_set1_epi32(119)), 23),
                                           _mm512_slli_epi32(man, 20));
    const __m512 subnormal = _mm512_mul_ps(_mm512_cvtepi32_ps(man), _mm512_set1_ps(0x1p-10f));
    const __m512 value = _mm512_mask_blend_ps(_mm512_cmpeq_epi32_mask(exp, _mm512_setzero_si512()),
                                              _mm512_castsi512_ps(normal), subnormal);
    return _mm512_maskz_mov_ps(_mm512_cmpneq_epi32_mask(bytes, _mm512_set1_epi32(0x7F)), value);
}

}  // namespace

float dot_q1_0_q8_0_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ1_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    const __m512i ones = _mm512_set1_epi8(1);
    // Σ ±a over values 64h .. 64h + 63 of block i (Q8_0 blocks 4i + 2h, 4i + 2h + 1): the bits are
    // the mask of the values that keep their sign.
    auto half_sums = [&](int64_t i, int h) {
        uint64_t bits = 0;
        std::memcpy(&bits, w[i].qs + 8 * h, sizeof(bits));
        const __m512i q8 = load_pair(a + 4 * i + 2 * h);
        const __m512i signed_a = _mm512_mask_sub_epi8(q8, static_cast<__mmask64>(~bits), _mm512_setzero_si512(), q8);
        return _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, signed_a);
    };
    // Two blocks at a time: their four halves' totals meet Q8_0 blocks 4i + {0, 2, 4, 6, 1, 3, 5, 7}
    // and the weight scales of blocks i, i, i + 1, i + 1 (twice).
    const __m256i a_at = q8_0_scale_offsets();
    const __m256i w_at = _mm256_setr_epi32(0, 0, 18, 18, 0, 0, 18, 18);
    const int64_t nb = block_count(n, 128, "Q1_0 rows hold a multiple of 128 values");
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m256i totals = block_totals(half_sums(i, 0), half_sums(i, 1), half_sums(i + 1, 0), half_sums(i + 1, 1));
        const __m256 scales = _mm256_mul_ps(gather_fp16(a + 4 * i, a_at), gather_fp16(w + i, w_at));
        acc = _mm256_fmadd_ps(scales, _mm256_cvtepi32_ps(totals), acc);
    }
    float sum = hsum(acc);
    if (i < nb) {
        const float d = _cvtsh_ss(w[i].d);
        const BlockQ8_0* ab = a + 4 * i;
        sum += pair_total(half_sums(i, 0), d, _cvtsh_ss(ab[0].d), _cvtsh_ss(ab[1].d)) +
               pair_total(half_sums(i, 1), d, _cvtsh_ss(ab[2].d), _cvtsh_ss(ab[3].d));
    }
    return sum;
}

float dot_q2_0_q8_0_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ2_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    // Byte p of the register is byte p / 4 of the codes (lane L holds values 16L..16L+15, bytes
    // 4L..4L+3); its low and high code bits sit at bits 2(p % 4) and 2(p % 4) + 1.
    const __m512i spread = _mm512_set_epi8(15, 15, 15, 15, 14, 14, 14, 14, 13, 13, 13, 13, 12, 12, 12, 12,  //
                                           11, 11, 11, 11, 10, 10, 10, 10, 9, 9, 9, 9, 8, 8, 8, 8,          //
                                           7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4,                  //
                                           3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    const __m512i low_bit = _mm512_set1_epi32(0x40100401);
    const __m512i high_bit = _mm512_set1_epi32(static_cast<int>(0x80200802u));
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i twos = _mm512_set1_epi8(2);
    // Σ (code − 1)·a = Σ code·a − Σ a over block i (lanes 0-7: Q8_0 block 2i, 8-15: 2i + 1).
    auto pair_sums = [&](int64_t i) {
        const __m512i bytes =
            _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].qs))), spread);
        const __m512i low = _mm512_maskz_mov_epi8(_mm512_test_epi8_mask(bytes, low_bit), ones);
        const __m512i code = _mm512_mask_add_epi8(low, _mm512_test_epi8_mask(bytes, high_bit), low, twos);
        const __m512i q8 = load_pair(a + 2 * i);
        return _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), code, q8),
                                _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, q8));
    };
    // Four blocks at a time: totals meet Q8_0 blocks 2i + {0, 2, 4, 6, 1, 3, 5, 7} and the weight
    // scales of blocks i .. i + 3 (twice).
    const __m256i a_at = q8_0_scale_offsets();
    const __m256i w_at = _mm256_setr_epi32(0, 18, 36, 54, 0, 18, 36, 54);
    const int64_t nb = block_count(n, 64, "Q2_0 rows hold a multiple of 64 values");
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 4 <= nb; i += 4) {
        const __m256i totals = block_totals(pair_sums(i), pair_sums(i + 1), pair_sums(i + 2), pair_sums(i + 3));
        const __m256 scales = _mm256_mul_ps(gather_fp16(a + 2 * i, a_at), gather_fp16(w + i, w_at));
        acc = _mm256_fmadd_ps(scales, _mm256_cvtepi32_ps(totals), acc);
    }
    float sum = hsum(acc);
    for (; i < nb; ++i) sum += pair_total(pair_sums(i), _cvtsh_ss(w[i].d), _cvtsh_ss(a[2 * i].d), _cvtsh_ss(a[2 * i + 1].d));
    return sum;
}

float dot_nvfp4_q8_0_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockNvfp4*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    // E2M1 magnitudes doubled, for codes with and without the sign bit; the sign goes onto the
    // activation.
    const __m512i magnitudes = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, 1, 2, 3, 4, 6, 8, 12));
    const __m512i sign_bit = _mm512_set1_epi8(8);
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    // Lane L gets sub-block L's 8 code bytes twice: low nibbles (values 0-7) from the first copy,
    // high nibbles (8-15) from the second.
    const __m512i twice = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3);
    // Σ code·a of block i as 16 int32: 128-bit lane L holds sub-block L's four partial sums.
    auto block_sums = [&](int64_t i) {
        const __m512i c = _mm512_permutexvar_epi64(twice, _mm512_castsi256_si512(load256(w[i].qs)));
        const __m512i code = _mm512_and_si512(_mm512_mask_blend_epi64(0xAA, c, _mm512_srli_epi16(c, 4)), nibble);
        const __m512i q8 = load_pair(a + 2 * i);
        const __m512i q8_signed =
            _mm512_mask_sub_epi8(q8, _mm512_test_epi8_mask(code, sign_bit), _mm512_setzero_si512(), q8);
        return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_shuffle_epi8(magnitudes, code), q8_signed);
    };
    // Four blocks at a time, integers summed per sub-block first: element 4L + j of the totals is
    // sub-block L of block i + j. Its scale is E4M3 byte d[L] of that block (the four blocks'
    // scale words gathered, then transposed to the same order) times the activation scale of Q8_0
    // block 2(i + j) + L / 2.
    const __m128i scale_words_at = _mm_setr_epi32(0, 36, 72, 108);
    const __m128i transpose = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512i a_scale_index = _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7);
    const __m256i a_at = q8_0_scale_offsets();
    const int64_t nb = block_count(n, 64, "NVFP4 rows hold a multiple of 64 values");
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 4 <= nb; i += 4) {
        const __m512i d0 = block_sums(i), d1 = block_sums(i + 1), d2 = block_sums(i + 2), d3 = block_sums(i + 3);
        const __m512i s01 = _mm512_add_epi32(_mm512_unpacklo_epi32(d0, d1), _mm512_unpackhi_epi32(d0, d1));
        const __m512i s23 = _mm512_add_epi32(_mm512_unpacklo_epi32(d2, d3), _mm512_unpackhi_epi32(d2, d3));
        const __m512i totals = _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23), _mm512_unpackhi_epi64(s01, s23));
        const __m128i words = _mm_i32gather_epi32(reinterpret_cast<const int*>(w + i), scale_words_at, 1);
        const __m512 w_scales = ue4m3_half_x16(_mm512_cvtepu8_epi32(_mm_shuffle_epi8(words, transpose)));
        const __m512 a_scales = _mm512_permutexvar_ps(a_scale_index, _mm512_castps256_ps512(gather_fp16(a + 2 * i, a_at)));
        acc = _mm512_fmadd_ps(_mm512_mul_ps(w_scales, a_scales), _mm512_cvtepi32_ps(totals), acc);
    }
    float sum = _mm512_reduce_add_ps(acc);
    for (; i < nb; ++i) {
        const __m512i sums = block_sums(i);
        const float da0 = _cvtsh_ss(a[2 * i].d), da1 = _cvtsh_ss(a[2 * i + 1].d);
        sum += da0 * (kUe4m3Half[w[i].d[0]] * static_cast<float>(_mm512_mask_reduce_add_epi32(0x000F, sums)) +
                      kUe4m3Half[w[i].d[1]] * static_cast<float>(_mm512_mask_reduce_add_epi32(0x00F0, sums))) +
               da1 * (kUe4m3Half[w[i].d[2]] * static_cast<float>(_mm512_mask_reduce_add_epi32(0x0F00, sums)) +
                      kUe4m3Half[w[i].d[3]] * static_cast<float>(_mm512_mask_reduce_add_epi32(0xF000, sums)));
    }
    return sum;
}

}  // namespace strata
