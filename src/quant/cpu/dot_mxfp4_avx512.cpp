// AVX-512 (VNNI) dot kernel of MXFP4 (quant/mxfp4.h) with a Q8_0 activation row. Two blocks
// per 512-bit register: the E2M1 codes become doubled integer magnitudes through one byte
// shuffle (the 16-entry table in every 128-bit lane), the sign bit negates the activation, and
// VNNI's _mm512_dpbusd_epi32 sums |q|·(a·sign q) four bytes per int32 lane; each block's 8 lanes
// are scaled once by 2^(e−128)·d_a.

// GCC 12's AVX-512 intrinsics self-initialise their "undefined" vectors (`__Y = __Y`), which
// -Wuninitialized reports at every inlined use (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <bit>

#include "core/check.h"
#include "quant/cpu/dot_kernels_avx512.h"
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

__m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
__m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

}  // namespace

float dot_mxfp4_q8_0_avx512(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockMxfp4*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    // E2M1 magnitudes {0, 0.5, 1, 1.5, 2, 3, 4, 6} doubled, for codes with and without the sign
    // bit (3); in every 128-bit lane. The sign goes onto the activation instead.
    const __m512i magnitudes = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, 1, 2, 3, 4, 6, 8, 12));
    const __m512i sign_bit = _mm512_set1_epi8(8);
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    const int64_t nb = block_count(n);
    // Blocks i and i+1 (or i alone when it is the last) added to `acc`.
    auto add_pair = [&](int64_t i, __m512 acc) {
        const bool pair = i + 1 < nb;
        // Codes of both blocks, then the same shifted: lanes [c0, c1, c0>>4, c1>>4], reordered
        // to [c0, c0>>4, c1, c1>>4] = values 0-15, 16-31 of each block, the activation's order.
        const __m128i c0 = load128(w[i].qs);
        const __m128i c1 = pair ? load128(w[i + 1].qs) : _mm_setzero_si128();
        const __m256i codes = _mm256_set_m128i(c1, c0);
        const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(codes), _mm256_srli_epi16(codes, 4), 1);
        const __m512i ordered = _mm512_shuffle_i64x2(both, both, _MM_SHUFFLE(3, 1, 2, 0));
        const __m512i code = _mm512_and_si512(ordered, nibble);

        const __m512i a_first = _mm512_zextsi256_si512(load256(a[i].qs));
        const __m512i q8 = pair ? _mm512_inserti64x4(a_first, load256(a[i + 1].qs), 1) : a_first;
        // |q|·(a·sign q): exact, Q8_0 quants are never −128.
        const __mmask64 negative = _mm512_test_epi8_mask(code, sign_bit);
        const __m512i q8_signed = _mm512_mask_sub_epi8(q8, negative, _mm512_setzero_si512(), q8);
        const __m512i sumi =
            _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_shuffle_epi8(magnitudes, code), q8_signed);

        const float d0 = _cvtsh_ss(a[i].d) * half_scale(w[i].e);
        const float d1 = pair ? _cvtsh_ss(a[i + 1].d) * half_scale(w[i + 1].e) : 0.0f;
        const __m512 scale = _mm512_insertf32x8(_mm512_set1_ps(d0), _mm256_set1_ps(d1), 1);
        return _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(sumi), acc);
    };
    // Two accumulators, so that the fused multiply-add latency is not a chain through every pair.
    __m512 acc0 = _mm512_setzero_ps();
    __m512 acc1 = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; i += 4) {
        acc0 = add_pair(i, acc0);
        if (i + 2 < nb) acc1 = add_pair(i + 2, acc1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

}  // namespace strata
