// AVX2 dot kernels of the IQ formats (weights · Q8_K activation; IQ4_NL · Q8_0). Each computes the
// scalar reference of quant/iq1.h .. iq4.h up to float summation order; tests/quant/
// cpu_kernels_iq_test.cpp checks that on ggml's vectors and on random blocks.
//
// One scheme for every grid format, per 32 values:
//   magnitudes  4 grid entries (8 bytes each) or 8 (4 bytes each) looked up and packed in a ymm,
//   signs       applied to the activation, not the weights (vpsignb), so that vpmaddubsw can take
//               the unsigned magnitudes as its u8 operand,
//   products    vpmaddubsw → 16 int16 pair sums (|grid|·127·2 fits int16 for every format), then
//               vpmaddwd against the group's integer scale → 8 int32, summed over the block,
// and one float multiply-add per block with d(weights)·d(activation). The formats' fractional scale
// factors (⅛ for IQ2, ¼ for IQ3_XXS) are applied once to the final sum, as the references do.
//
// IQ1 values are dl·(grid + δ) with grid ∈ {−1, 0, 1}, δ = ±⅛: scaled by 8 they are the integers
// 8·grid ± 1 ∈ [−9, 9]. The kernels multiply 8·grid ± 1 + 9 ∈ [0, 18] (unsigned, so no vpsignb)
// and subtract 9·Σq, known per 16 values from Q8_K's bsums.
#include <immintrin.h>

#include <cstring>

#include "core/check.h"
#include "quant/cpu/dot_iq_common.h"
#include "quant/cpu/dot_kernels_avx2.h"
#include "quant/iq1.h"
#include "quant/iq2.h"
#include "quant/iq3.h"
#include "quant/iq4.h"
#include "quant/iq_grids.h"
#include "quant/legacy.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

using iq_simd::kIq2SignsPm1;

int64_t super_blocks(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "IQ rows hold a multiple of 256 values");
    return n / 256;
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

float horizontal_sum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

__m256i load_q8(const int8_t* q) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)); }

// Four 8-byte grid entries, entry l in bytes 8l..8l+7.
__m256i grid_entries(const uint64_t* grid, uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
    return _mm256_set_epi64x(static_cast<long long>(grid[i3]), static_cast<long long>(grid[i2]),
                             static_cast<long long>(grid[i1]), static_cast<long long>(grid[i0]));
}

// Eight 4-byte grid entries (IQ3), entry k = grid[index(k)]. Loaded one by one: on Zen 4 that is
// faster than vpgatherdd (measured 4.3 vs 3.5 GB/s of IQ3_XXS weights).
template <typename IndexOf>
__m256i grid_entries32(const uint32_t* grid, IndexOf index) {
    const auto e = [&](int k) { return static_cast<int>(grid[index(k)]); };
    return _mm256_set_epi32(e(7), e(6), e(5), e(4), e(3), e(2), e(1), e(0));
}

// The same from an index vector, with vpgatherdd: for IQ3_S, whose 9-bit indices are cheaper to
// assemble in a vector, this measured faster than assembling them in scalar code (4.1 vs 3.6 GB/s).
__m256i gathered_grid_entries32(const uint32_t* grid, __m256i indices) {
    return _mm256_i32gather_epi32(reinterpret_cast<const int*>(grid), indices, 4);
}

// ±1 bytes for four 7-bit sign codes (IQ2_XXS, IQ2_XS, IQ3_XXS), code l for values 8l..8l+7.
__m256i parity_signs(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) {
    return grid_entries(kIq2SignsPm1.data(), c0, c1, c2, c3);
}

// ±1 bytes for 32 explicit sign bits (IQ2_S, IQ3_S): bit j of `bits` negates value j.
__m256i explicit_signs(uint32_t bits) {
    const __m256i replicate = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,  //
                                               2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)), replicate);
    const __m256i negative = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
    return _mm256_or_si256(negative, _mm256_set1_epi8(1));
}

// Σ magnitude·(±q) over 32 values as 8 int32, each pair sum scaled by the int16 lanes of `scale`
// (lanes 0-7 cover values 0-15, lanes 8-15 values 16-31).
__m256i scaled_products(__m256i magnitudes, __m256i signs, const int8_t* q8, __m256i scale) {
    const __m256i pairs = _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(load_q8(q8), signs));
    return _mm256_madd_epi16(pairs, scale);
}

__m256i scale_per_32(int s) { return _mm256_set1_epi16(static_cast<short>(s)); }
__m256i scale_per_16(int first, int second) {
    return _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(second)), _mm_set1_epi16(static_cast<short>(first)));
}

// IQ4 levels for 32 values from 16 bytes of nibbles (low nibbles are values 0-15).
__m256i iq4_levels(const uint8_t* qs) {
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i codes = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0F));
    return _mm256_shuffle_epi8(table, codes);
}

// Σ level·q over 32 values as 16 int16 pair sums: signed·signed through |level| and sign-moved q.
__m256i iq4_pairs(__m256i levels, const int8_t* q8) {
    return _mm256_maddubs_epi16(_mm256_abs_epi8(levels), _mm256_sign_epi8(load_q8(q8), levels));
}

// IQ1: 8·(grid + 1) + (δ + 1) ∈ [0, 18] from int8 grid bytes and a vector of δ + 1 ∈ {0, 2}.
// The 16-bit shift is safe: grid + 1 ≤ 2 keeps every byte's bits inside the byte.
__m256i iq1_shifted_values(__m256i grid, __m256i delta_plus_one) {
    const __m256i shifted = _mm256_slli_epi16(_mm256_add_epi8(grid, _mm256_set1_epi8(1)), 3);
    return _mm256_add_epi8(shifted, delta_plus_one);
}

}  // namespace

float dot_iq2_xxs_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2Xxs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m256i sum = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint32_t idx = load_u32(w[i].qs + 8 * g);
            const uint32_t signs_and_scale = load_u32(w[i].qs + 8 * g + 4);
            const __m256i mag = grid_entries(kIq2xxsGrid, idx & 255, (idx >> 8) & 255, (idx >> 16) & 255, idx >> 24);
            const __m256i sgn = parity_signs(signs_and_scale & 127, (signs_and_scale >> 7) & 127,
                                             (signs_and_scale >> 14) & 127, (signs_and_scale >> 21) & 127);
            const int ls = 2 * static_cast<int>(signs_and_scale >> 28) + 1;
            sum = _mm256_add_epi32(sum, scaled_products(mag, sgn, a[i].qs + 32 * g, scale_per_32(ls)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return 0.125f * horizontal_sum(acc);
}

float dot_iq2_xs_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2Xs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m256i sum = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint16_t* q = w[i].qs + 4 * g;
            const __m256i mag = grid_entries(kIq2xsGrid, q[0] & 511, q[1] & 511, q[2] & 511, q[3] & 511);
            const __m256i sgn = parity_signs(q[0] >> 9, q[1] >> 9, q[2] >> 9, q[3] >> 9);
            const int s = w[i].scales[g];
            const __m256i scale = scale_per_16(2 * (s & 15) + 1, 2 * (s >> 4) + 1);
            sum = _mm256_add_epi32(sum, scaled_products(mag, sgn, a[i].qs + 32 * g, scale));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return 0.125f * horizontal_sum(acc);
}

float dot_iq2_s_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq2S*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m256i sum = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = w[i].qs + 4 * g;
            const uint32_t h = w[i].qh[g];
            const __m256i mag = grid_entries(kIq2sGrid, q[0] | ((h << 8) & 0x300), q[1] | ((h << 6) & 0x300),
                                             q[2] | ((h << 4) & 0x300), q[3] | ((h << 2) & 0x300));
            const __m256i sgn = explicit_signs(load_u32(w[i].qs + 32 + 4 * g));
            const int s = w[i].scales[g];
            const __m256i scale = scale_per_16(2 * (s & 15) + 1, 2 * (s >> 4) + 1);
            sum = _mm256_add_epi32(sum, scaled_products(mag, sgn, a[i].qs + 32 * g, scale));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return 0.125f * horizontal_sum(acc);
}

float dot_iq3_xxs_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq3Xxs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m256i sum = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = w[i].qs + 8 * g;
            const __m256i mag = grid_entries32(kIq3xxsGrid, [&](int k) { return q[k]; });
            const uint32_t signs_and_scale = load_u32(w[i].qs + 64 + 4 * g);
            const __m256i sgn = parity_signs(signs_and_scale & 127, (signs_and_scale >> 7) & 127,
                                             (signs_and_scale >> 14) & 127, (signs_and_scale >> 21) & 127);
            const int ls = 2 * static_cast<int>(signs_and_scale >> 28) + 1;
            sum = _mm256_add_epi32(sum, scaled_products(mag, sgn, a[i].qs + 32 * g, scale_per_32(ls)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return 0.25f * horizontal_sum(acc);
}

float dot_iq3_s_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
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
            const __m256i mag = gathered_grid_entries32(kIq3sGrid, _mm256_or_si256(low, high));
            const __m256i sgn = explicit_signs(load_u32(w[i].signs + 4 * g));
            const int ls = 2 * ((w[i].scales[g / 2] >> (4 * (g % 2))) & 15) + 1;
            sum = _mm256_add_epi32(sum, scaled_products(mag, sgn, a[i].qs + 32 * g, scale_per_32(ls)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return horizontal_sum(acc);
}

float dot_iq4_xs_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq4Xs*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m256i sum = _mm256_setzero_si256();
        for (int g = 0; g < 8; ++g) {
            const int code = ((w[i].scales_l[g / 2] >> (4 * (g % 2))) & 15) | (((w[i].scales_h >> (2 * g)) & 3) << 4);
            const __m256i pairs = iq4_pairs(iq4_levels(w[i].qs + 16 * g), a[i].qs + 32 * g);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, scale_per_32(code - 32)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return horizontal_sum(acc);
}

float dot_iq4_nl_q8_0_avx2(const void* weights, const void* activation, int64_t n) {
    STRATA_CHECK(n % 32 == 0, "IQ4_NL rows hold a multiple of 32 values");
    const auto* w = static_cast<const BlockIq4Nl*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    const __m256i ones = _mm256_set1_epi16(1);
    const auto block_dot = [&](int64_t i, __m256 acc) {
        const __m256i sums = _mm256_madd_epi16(iq4_pairs(iq4_levels(w[i].qs), a[i].qs), ones);
        const __m256 d = _mm256_set1_ps(fp16_scale(w[i].d) * fp16_scale(a[i].d));
        return _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums), acc);
    };
    // Two accumulators: a block is only 32 values, so one fmadd latency chain would dominate.
    __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
    const int64_t nb = n / 32;
    int64_t i = 0;
    for (; i + 1 < nb; i += 2) {
        even = block_dot(i, even);
        odd = block_dot(i + 1, odd);
    }
    if (i < nb) even = block_dot(i, even);
    return horizontal_sum(_mm256_add_ps(even, odd));
}

float dot_iq1_s_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq1S*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        __m256i sum = _mm256_setzero_si256();
        int32_t offset = 0;  // Σ ls·Σq: the +9 folded into the values, taken back below
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = w[i].qs + 4 * g;
            const uint32_t h = w[i].qh[g];
            const __m256i grid = grid_entries(kIq1sGrid, q[0] | ((h << 8) & 0x700), q[1] | ((h << 5) & 0x700),
                                              q[2] | ((h << 2) & 0x700), q[3] | ((h >> 1) & 0x700));
            const __m256i delta = (h & 0x8000) ? _mm256_setzero_si256() : _mm256_set1_epi8(2);
            const int ls = 2 * static_cast<int>((h >> 12) & 7) + 1;
            const __m256i pairs = _mm256_maddubs_epi16(iq1_shifted_values(grid, delta), load_q8(a[i].qs + 32 * g));
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, scale_per_32(ls)));
            offset += ls * (a[i].bsums[2 * g] + a[i].bsums[2 * g + 1]);
        }
        sum = _mm256_sub_epi32(sum, _mm256_zextsi128_si256(_mm_cvtsi32_si128(9 * offset)));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(w[i].d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return 0.125f * horizontal_sum(acc);
}

float dot_iq1_m_q8_k_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq1M*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    // Scale codes: lane 4k + m of a 16-lane vector takes word k of `scales`; multiplying by
    // 2^(13 − 3m) moves its bits 3m..3m+2 to the top, where a shift by 13 reads them.
    const __m256i word_of_lane = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,  //
                                                  4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7);
    const __m256i code_to_top = _mm256_setr_epi16(8192, 1024, 128, 16, 8192, 1024, 128, 16,  //
                                                  8192, 1024, 128, 16, 8192, 1024, 128, 16);
    // Per 32-group: the two 16-value scales (one int32 lane of the scale vector) spread over
    // the low and high 128 bits.
    const __m256i split_pair = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,  //
                                                2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    // δ's sign of group l sits in bit 3 + 4l of the 16-bit qh pair; one mask per 8 values.
    constexpr short kBit15 = static_cast<short>(0x8000);
    const __m256i delta_bit = _mm256_setr_epi16(0x0008, 0x0008, 0x0008, 0x0008, 0x0080, 0x0080, 0x0080, 0x0080,
                                                0x0800, 0x0800, 0x0800, 0x0800, kBit15, kBit15, kBit15, kBit15);
    const __m256i two = _mm256_set1_epi8(2);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        const __m128i words = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w[i].scales));
        const __m256i per_lane = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(words), word_of_lane);
        const __m256i codes = _mm256_srli_epi16(_mm256_mullo_epi16(per_lane, code_to_top), 13);
        const __m256i ls = _mm256_add_epi16(_mm256_add_epi16(codes, codes), _mm256_set1_epi16(1));  // 16 × (2s+1)
        const uint16_t d = static_cast<uint16_t>((load_u16(w[i].scales) >> 12) | ((load_u16(w[i].scales + 2) >> 8) & 0x00F0) |
                                                 ((load_u16(w[i].scales + 4) >> 4) & 0x0F00) |
                                                 (load_u16(w[i].scales + 6) & 0xF000));

        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].bsums));
        const __m256i offset = _mm256_madd_epi16(ls, bsums);  // Σ ls·Σq, taken ×9 from the sum
        __m256i sum = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_add_epi32(_mm256_slli_epi32(offset, 3), offset));
        for (int g = 0; g < 8; ++g) {
            const uint8_t* q = w[i].qs + 4 * g;
            const uint32_t h = load_u16(w[i].qh + 2 * g);
            const __m256i grid = grid_entries(kIq1sGrid, q[0] | ((h << 8) & 0x700), q[1] | ((h << 4) & 0x700),
                                              q[2] | (h & 0x700), q[3] | ((h >> 4) & 0x700));
            const __m256i negative = _mm256_cmpeq_epi16(_mm256_and_si256(_mm256_set1_epi16(static_cast<short>(h)), delta_bit),
                                                        delta_bit);
            const __m256i delta = _mm256_andnot_si256(negative, two);
            const __m256i scale = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(ls, _mm256_set1_epi32(g)), split_pair);
            const __m256i pairs = _mm256_maddubs_epi16(iq1_shifted_values(grid, delta), load_q8(a[i].qs + 32 * g));
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, scale));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_scale(d) * a[i].d), _mm256_cvtepi32_ps(sum), acc);
    }
    return 0.125f * horizontal_sum(acc);
}

}  // namespace strata
