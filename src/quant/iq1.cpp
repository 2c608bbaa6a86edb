// Scalar reference code of the 1-bit IQ formats. Dequantization does ggml's float operations in
// the same order (the library is built with -ffp-contract=off), so values match the reference
// vectors bit for bit. The dots split dl·(grid + δ)·a into dl·grid·a, summed in integers, and
// dl·δ·a, for which only the sum of the activation quants is needed (Q8_K's bsums cover IQ1_S's
// groups of 32; IQ1_M's δ changes every 8 values, so it sums the quants itself).
#include "quant/iq1.h"

#include <cstring>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/iq_grids.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

constexpr float kDelta = 0.125f;

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "IQ1 rows hold a multiple of 256 values");
    return n / 256;
}

int8_t grid_value(uint64_t entry, int j) { return static_cast<int8_t>(grid_byte(entry, j)); }

int iq1s_index(const BlockIq1S& b, int g, int l) { return b.qs[4 * g + l] | (((b.qh[g] >> (3 * l)) & 7) << 8); }
int iq1s_scale_code(const BlockIq1S& b, int g) { return (b.qh[g] >> 12) & 7; }
bool iq1s_delta_negative(const BlockIq1S& b, int g) { return b.qh[g] & 0x8000; }

// IQ1_M: the four scale words, and the fp16 super-block scale assembled from their top nibbles.
struct Iq1mScales {
    uint16_t words[4];
    uint16_t d;
};

Iq1mScales iq1m_scales(const BlockIq1M& b) {
    Iq1mScales s;
    std::memcpy(s.words, b.scales, sizeof(s.words));
    s.d = static_cast<uint16_t>((s.words[0] >> 12) | ((s.words[1] >> 8) & 0x00F0) | ((s.words[2] >> 4) & 0x0F00) |
                                (s.words[3] & 0xF000));
    return s;
}

// Scale code of half h (0: values 0-15, 1: values 16-31) of 32-group g.
int iq1m_scale_code(const Iq1mScales& s, int g, int h) { return (s.words[g / 2] >> (6 * (g % 2) + 3 * h)) & 7; }

// The nibble of qh describing group l (0..3) of 32-group g.
int iq1m_nibble(const BlockIq1M& b, int g, int l) { return (b.qh[2 * g + l / 2] >> (4 * (l % 2))) & 0xF; }
int iq1m_index(const BlockIq1M& b, int g, int l) { return b.qs[4 * g + l] | ((iq1m_nibble(b, g, l) & 7) << 8); }
bool iq1m_delta_negative(const BlockIq1M& b, int g, int l) { return iq1m_nibble(b, g, l) & 8; }

// Writes dl·(grid + δ) for one group of 8.
void decode_group(float dl, float delta, uint64_t entry, float* dst) {
    for (int j = 0; j < 8; ++j) dst[j] = dl * (static_cast<float>(grid_value(entry, j)) + delta);
}

int32_t dot_group(uint64_t entry, const int8_t* q8) {
    int32_t sum = 0;
    for (int j = 0; j < 8; ++j) sum += q8[j] * grid_value(entry, j);
    return sum;
}

}  // namespace

void dequantize_row_iq1_s(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockIq1S*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int g = 0; g < 8; ++g) {
            const float dl = d * static_cast<float>(2 * iq1s_scale_code(b[i], g) + 1);
            const float delta = iq1s_delta_negative(b[i], g) ? -kDelta : kDelta;
            for (int l = 0; l < 4; ++l, dst += 8) decode_group(dl, delta, kIq1sGrid[iq1s_index(b[i], g, l)], dst);
        }
    }
}

void dequantize_row_iq1_m(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockIq1M*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const Iq1mScales s = iq1m_scales(b[i]);
        const float d = fp16_to_fp32(s.d);
        for (int g = 0; g < 8; ++g) {
            const float dl[2] = {d * static_cast<float>(2 * iq1m_scale_code(s, g, 0) + 1),
                                 d * static_cast<float>(2 * iq1m_scale_code(s, g, 1) + 1)};
            for (int l = 0; l < 4; ++l, dst += 8) {
                const float delta = iq1m_delta_negative(b[i], g, l) ? -kDelta : kDelta;
                decode_group(dl[l / 2], delta, kIq1sGrid[iq1m_index(b[i], g, l)], dst);
            }
        }
    }
}

float dot_iq1_s_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq1S*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const int8_t* q8 = a[i].qs;
        int32_t grid_sum = 0, delta_sum = 0;  // Σ ls·grid·q and Σ ls·sign(δ)·q
        for (int g = 0; g < 8; ++g) {
            const int32_t ls = 2 * iq1s_scale_code(w[i], g) + 1;
            int32_t group_sum = 0;
            for (int l = 0; l < 4; ++l, q8 += 8) group_sum += dot_group(kIq1sGrid[iq1s_index(w[i], g, l)], q8);
            grid_sum += ls * group_sum;
            const int32_t q_sum = a[i].bsums[2 * g] + a[i].bsums[2 * g + 1];
            delta_sum += ls * (iq1s_delta_negative(w[i], g) ? -q_sum : q_sum);
        }
        sum += fp16_to_fp32(w[i].d) * a[i].d *
               (static_cast<float>(grid_sum) + kDelta * static_cast<float>(delta_sum));
    }
    return sum;
}

float dot_iq1_m_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockIq1M*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const Iq1mScales s = iq1m_scales(w[i]);
        const int8_t* q8 = a[i].qs;
        int32_t grid_sum = 0, delta_sum = 0;
        for (int g = 0; g < 8; ++g) {
            int32_t half_grid[2] = {0, 0}, half_delta[2] = {0, 0};
            for (int l = 0; l < 4; ++l, q8 += 8) {
                half_grid[l / 2] += dot_group(kIq1sGrid[iq1m_index(w[i], g, l)], q8);
                int32_t q_sum = 0;
                for (int j = 0; j < 8; ++j) q_sum += q8[j];
                half_delta[l / 2] += iq1m_delta_negative(w[i], g, l) ? -q_sum : q_sum;
            }
            const int32_t ls0 = 2 * iq1m_scale_code(s, g, 0) + 1;
            const int32_t ls1 = 2 * iq1m_scale_code(s, g, 1) + 1;
            grid_sum += half_grid[0] * ls0 + half_grid[1] * ls1;
            delta_sum += half_delta[0] * ls0 + half_delta[1] * ls1;
        }
        sum += fp16_to_fp32(s.d) * a[i].d * (static_cast<float>(grid_sum) + kDelta * static_cast<float>(delta_sum));
    }
    return sum;
}

}  // namespace strata
