// AVX-512 (F/BW/DQ/VL/VNNI) dot kernels of the IQ formats (weights · Q8_K activation; IQ4_NL ·
// Q8_0). Same arithmetic as dot_iq_avx2.cpp — unsigned magnitudes × sign-moved int8 activations
// through vpmaddubsw, then the integer group scales — on 64 values (two groups of 32) per step.
// What AVX-512 changes:
//   signs    become a 64-bit mask register applied with one masked subtract (0 − q); IQ2_S and
//            IQ3_S store their sign bits in exactly that layout, the 7-bit parity codes of
//            IQ2_XXS/IQ2_XS/IQ3_XXS are spread to it with pdep (BMI2) and a parity fold,
//   grids    are read entry by entry into a vector (faster than vpgatherqq on Zen 4),
//   scales   are applied and accumulated in one VNNI vpdpwssd.
// IQ3 steps over 32 values (a zmm of 16 separately loaded 4-byte entries cost more than it saved).
// IQ1_S, IQ4_NL and IQ4_XS have no kernel here: their 512-bit versions measured slower than the
// AVX2 ones on Zen 4 (which splits 512-bit operations in two), so dispatch uses dot_iq_avx2.cpp.
// GCC 12 reports the _mm512_undefined_*() placeholders inside its own AVX-512 intrinsics as
// (maybe-)uninitialized once they are inlined (GCC bug 105593, fixed in 13); -Werror would fail.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "core/check.h"
#include "quant/cpu/dot_kernels_avx512.h"
#include "quant/iq1.h"
#include "quant/iq2.h"
#include "quant/iq3.h"
#include "quant/iq_grids.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

int64_t super_blocks(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "IQ rows hold a multiple of 256 values");
    return n / 256;
}

uint64_t load_u64(const void* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

uint32_t load_u32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

uint16_t load_u16(const void* p) {
    uint16_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

float fp16_scale(uint16_t h) { return _cvtsh_ss(h); }

__m512i load_q8(const int8_t* q) { return _mm512_loadu_si512(q); }

// Eight 4-byte grid entries (IQ3), entry k = grid[index(k)], loaded one by one.
template <typename IndexOf>
__m256i grid_entries32x8(const uint32_t* grid, IndexOf index) {
    const auto e = [&](int k) { return static_cast<int>(grid[index(k)]); };
    return _mm256_set_epi32(e(7), e(6), e(5), e(4), e(3), e(2), e(1), e(0));
}

float horizontal_sum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// Eight 8-byte grid entries, entry k = grid[index(k)], loaded one by one: on Zen 4 this is
// faster than vpgatherqq (measured 4.1 vs 3.1 GB/s of IQ2_XXS weights).
template <typename IndexOf>
__m512i grid_entries(const uint64_t* grid, IndexOf index) {
    const auto e = [&](int k) { return static_cast<long long>(grid[index(k)]); };
    return _mm512_set_epi64(e(7), e(6), e(5), e(4), e(3), e(2), e(1), e(0));
}

// Eight 7-bit sign codes (code k in bits 7k..7k+6) → bit 8k+j set when value j of group k is
// negative; bit 8k+7 is the parity of the code (ggml stores only sign patterns with an even
// count of negatives). The xor folds leave each byte's parity in its bit 0 without crossing bytes.
uint64_t parity_sign_mask(uint64_t codes) {
    const uint64_t spread = _pdep_u64(codes, 0x7F7F7F7F7F7F7F7Full);
    uint64_t parity = spread ^ (spread >> 4);
    parity ^= parity >> 2;
    parity ^= parity >> 1;
    return spread | ((parity & 0x0101010101010101ull) << 7);
}

// The four 7-bit codes of each of two uint32 sign words (IQ2_XXS, IQ3_XXS: scale in bits 28-31).
uint64_t codes_of_words(uint32_t first, uint32_t second) {
    return (first & 0x0FFFFFFFu) | (uint64_t{second & 0x0FFFFFFFu} << 28);
}

// 64 activation quants, negated where `negative` has a bit.
__m512i signed_q8(const int8_t* q8, __mmask64 negative) {
    const __m512i q = load_q8(q8);
    return _mm512_mask_sub_epi8(q, negative, _mm512_setzero_si512(), q);
}

// 32 activation quants, negated where `negative` has a bit.
__m256i signed_q8_32(const int8_t* q8, __mmask32 negative) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8));
    return _mm256_mask_sub_epi8(q, negative, _mm256_setzero_si256(), q);
}

// sum += Σ magnitude·q8, each int16 pair sum times its int16 lane of `scale`.
__m512i accumulate(__m512i sum, __m512i magnitudes, __m512i q8, __m512i scale) {
    return _mm512_dpwssd_epi32(sum, _mm512_maddubs_epi16(magnitudes, q8), scale);
}

// One scale per 32 values: the first in the low 256 bits, the second in the high.
__m512i scale_per_32(int first, int second) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<short>(first))),
                              _mm256_set1_epi16(static_cast<short>(second)), 1);
}

// Sixteen int16 scales, one per 16 values of a super-block, spread to the 32 lanes of pair p
// (values 64p..64p+63): lane L takes scale 4p + L/8.
__m512i scale_per_16(__m256i scales, int p) {
    const __m512i lane_to_scale = _mm512_set_epi16(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,  //
                                                   1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i index = _mm512_add_epi16(lane_to_scale, _mm512_set1_epi16(static_cast<short>(4 * p)));
    return _mm512_permutexvar_epi16(index, _mm512_zextsi256_si512(scales));
}

// 2s+1 for the 16 nibbles of 8 scale bytes, low nibble first (IQ2_XS, IQ2_S).
__m256i odd_scales_from_nibbles(const uint8_t* scales) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales));
    const __m128i nibbles = _mm_unpacklo_epi8(_mm_and_si128(bytes, _mm_set1_epi8(15)),
                                              _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(15)));
    const __m256i s = _mm256_cvtepu8_epi16(nibbles);
    return _mm256_add_epi16(_mm256_add_epi16(s, s), _mm256_set1_epi16(1));
}

// IQ1: 8·(grid + 1) + (δ + 1) ∈ [0, 18] (see dot_iq_avx2.cpp); grid + 1 ≤ 2 keeps the 16-bit
// shift inside each byte.
__m512i iq1_shifted_values(__m512i grid, __m512i delta_plus_one) {
    const __m512i shifted = _mm512_slli_epi16(_mm512_add_epi8(grid, _mm512_set1_epi8(1)), 3);
    return _mm512_add_epi8(shifted, delta_plus_one);
}

}  // namespace

float dot_iq2_xxs_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2Xxs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m512i sum = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p) {
            const uint8_t* q = w[i].qs + 16 * p;  // two groups: 4 index bytes, then a sign/scale word
            const uint32_t s0 = load_u32(q + 4), s1 = load_u32(q + 12);
            const uint64_t idx = load_u32(q) | (uint64_t{load_u32(q + 8)} << 32);
            const __m512i mag = grid_entries(kIq2xxsGrid, [&](int k) { return (idx >> (8 * k)) & 255; });
            const __m512i q8 = signed_q8(a[i].qs + 64 * p, parity_sign_mask(codes_of_words(s0, s1)));
            sum = accumulate(sum, mag, q8, scale_per_32(2 * static_cast<int>(s0 >> 28) + 1, 2 * static_cast<int>(s1 >> 28) + 1));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm512_cvtepi32_ps(sum), acc);
    }
    return 0.125f * _mm512_reduce_add_ps(acc);
}

float dot_iq2_xs_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2Xs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    constexpr uint64_t kSignBits = 0xFE00FE00FE00FE00ull;  // bits 9-15 of four uint16
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m256i scales = odd_scales_from_nibbles(w[i].scales);
        __m512i sum = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p) {
            const uint16_t* q = w[i].qs + 8 * p;
            const __m512i mag = grid_entries(kIq2xsGrid, [&](int k) { return q[k] & 511; });
            const uint64_t codes = _pext_u64(load_u64(q), kSignBits) | (_pext_u64(load_u64(q + 4), kSignBits) << 28);
            const __m512i q8 = signed_q8(a[i].qs + 64 * p, parity_sign_mask(codes));
            sum = accumulate(sum, mag, q8, scale_per_16(scales, p));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm512_cvtepi32_ps(sum), acc);
    }
    return 0.125f * _mm512_reduce_add_ps(acc);
}

float dot_iq2_s_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2S*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m256i scales = odd_scales_from_nibbles(w[i].scales);
        __m512i sum = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p) {
            const uint8_t* q = w[i].qs + 8 * p;
            const uint32_t h = load_u16(w[i].qh + 2 * p);  // 2 high index bits per group of 8
            const __m512i mag = grid_entries(kIq2sGrid, [&](int k) { return q[k] | (((h >> (2 * k)) & 3) << 8); });
            const __m512i q8 = signed_q8(a[i].qs + 64 * p, load_u64(w[i].qs + 32 + 8 * p));
            sum = accumulate(sum, mag, q8, scale_per_16(scales, p));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm512_cvtepi32_ps(sum), acc);
    }
    return 0.125f * _mm512_reduce_add_ps(acc);
}

float dot_iq3_xxs_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    // 32 values per step: 16 separate 4-byte loads for a zmm cost more than they save.
    const auto* w = static_cast<const BlockIq3Xxs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m256i sum = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = w[i].qs + 8 * g;
            const __m256i mag = grid_entries32x8(kIq3xxsGrid, [&](int k) { return q[k]; });
            const uint32_t s = load_u32(w[i].qs + 64 + 4 * g);
            const __m256i q8 = signed_q8_32(a[i].qs + 32 * g, static_cast<__mmask32>(parity_sign_mask(s & 0x0FFFFFFFu)));
            sum = _mm256_dpwssd_epi32(sum, _mm256_maddubs_epi16(mag, q8), _mm256_set1_epi16(static_cast<short>(2 * (s >> 28) + 1)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return 0.25f * horizontal_sum(acc);
}

float dot_iq3_s_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    // 32 values per step, as IQ3_XXS; the 9-bit indices are assembled in a vector and gathered
    // (measured faster here than assembling them in scalar code).
    const auto* w = static_cast<const BlockIq3S*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    const __m256i ninth_bit_shift = _mm256_setr_epi32(8, 7, 6, 5, 4, 3, 2, 1);  // bit k of qh → bit 8
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m256i sum = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const __m256i low = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w[i].qs + 8 * g)));
            const __m256i high = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(w[i].qh[g]), ninth_bit_shift),
                                                  _mm256_set1_epi32(256));
            const __m256i mag = _mm256_i32gather_epi32(reinterpret_cast<const int*>(kIq3sGrid), _mm256_or_si256(low, high), 4);
            const __m256i q8 = signed_q8_32(a[i].qs + 32 * g, load_u32(w[i].signs + 4 * g));
            const int ls = 2 * ((w[i].scales[g / 2] >> (4 * (g % 2))) & 15) + 1;
            sum = _mm256_dpwssd_epi32(sum, _mm256_maddubs_epi16(mag, q8), _mm256_set1_epi16(static_cast<short>(ls)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return horizontal_sum(acc);
}

float dot_iq1_m_q8_k_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq1M*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    // Scale code of 16-value half 4k + m is bits 3m..3m+2 of scale word k.
    const __m256i word_of_lane = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,  //
                                                  4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7);
    const __m256i code_shift = _mm256_setr_epi16(0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9);
    // qh has one nibble per 8 values: 3 high index bits, then δ's sign.
    const __m512i two = _mm512_set1_epi8(2);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m128i words = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w[i].scales));
        const __m256i per_lane = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(words), word_of_lane);
        const __m256i codes = _mm256_and_si256(_mm256_srlv_epi16(per_lane, code_shift), _mm256_set1_epi16(7));
        const __m256i ls = _mm256_add_epi16(_mm256_add_epi16(codes, codes), _mm256_set1_epi16(1));  // 16 × (2s+1)
        const uint16_t d = static_cast<uint16_t>((load_u16(w[i].scales) >> 12) | ((load_u16(w[i].scales + 2) >> 8) & 0x00F0) |
                                                 ((load_u16(w[i].scales + 4) >> 4) & 0x0F00) |
                                                 (load_u16(w[i].scales + 6) & 0xF000));
        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].bsums));
        const __m256i offset = _mm256_madd_epi16(ls, bsums);  // Σ ls·Σq, taken ×9 from the sum
        const __m256i nine_offsets = _mm256_add_epi32(_mm256_slli_epi32(offset, 3), offset);
        __m512i sum = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_zextsi256_si512(nine_offsets));
        for (int p = 0; p < 4; ++p) {
            const uint8_t* q = w[i].qs + 8 * p;
            const uint32_t h = load_u32(w[i].qh + 4 * p);
            const __m512i grid = grid_entries(kIq1sGrid, [&](int k) { return q[k] | (((h >> (4 * k)) & 7) << 8); });
            const __mmask8 positive = static_cast<__mmask8>(~_pext_u32(h, 0x88888888u));
            const __m512i delta = _mm512_maskz_mov_epi64(positive, two);
            sum = accumulate(sum, iq1_shifted_values(grid, delta), load_q8(a[i].qs + 64 * p), scale_per_16(ls, p));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(fp16_scale(d) * a[i].d), _mm512_cvtepi32_ps(sum), acc);
    }
    return 0.125f * _mm512_reduce_add_ps(acc);
}

}  // namespace strata
