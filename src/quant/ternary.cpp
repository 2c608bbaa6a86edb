#include "quant/ternary.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/fp16.h"
#include "quant/q8_k.h"

namespace strata {

namespace {

int64_t super_blocks(int64_t n) {
    STRATA_CHECK(n % 256 == 0, "ternary rows hold a multiple of 256 values");
    return n / 256;
}

constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};

// Trit k (0 = most significant) of a TQ1_0 byte, as 0, 1 or 2. Multiplying by 3^k modulo 256
// drops the leading trits of the fixed-point fraction; ×3 >> 8 takes the next one.
int trit(uint8_t byte, int k) {
    const auto shifted = static_cast<uint8_t>(byte * kPow3[k]);
    return (shifted * 3) >> 8;
}

// Calls f(value_index, trit ∈ {0,1,2}) for the 256 values of a TQ1_0 block, in storage order.
template <typename F>
void for_each_tq1_trit(const BlockTQ1_0& b, F&& f) {
    for (int k = 0; k < 5; ++k)
        for (int m = 0; m < 32; ++m) f(32 * k + m, trit(b.qs[m], k));
    for (int k = 0; k < 5; ++k)
        for (int m = 0; m < 16; ++m) f(160 + 16 * k + m, trit(b.qs[32 + m], k));
    for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 4; ++j) f(240 + 4 * k + j, trit(b.qh[j], k));
}

int tq2_trit(const BlockTQ2_0& b, int v) {
    const int h = v / 128, k = (v % 128) / 32, m = v % 32;
    return (b.qs[32 * h + m] >> (2 * k)) & 3;
}

float absmax(const float* x, int count) {
    float amax = 0.0f;
    for (int j = 0; j < count; ++j) amax = std::max(amax, std::fabs(x[j]));
    return amax;
}

// −1, 0, 1 → 0, 1, 2. lroundf (ties away from zero), as ggml.
int to_trit(float x, float id) { return static_cast<int>(std::lround(x * id)) + 1; }

// Packs trits (most significant first) as the fixed-point fraction ceil(256·T/243).
uint8_t pack_trits(int value) { return static_cast<uint8_t>((value * 256 + (243 - 1)) / 243); }

}  // namespace

void dequantize_row_tq1_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockTQ1_0*>(src);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i, dst += 256) {
        const float d = fp16_to_fp32(b[i].d);
        for_each_tq1_trit(b[i], [&](int v, int t) { dst[v] = static_cast<float>(t - 1) * d; });
    }
}

void dequantize_row_tq2_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockTQ2_0*>(src);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i, dst += 256) {
        const float d = fp16_to_fp32(b[i].d);
        for (int v = 0; v < 256; ++v) dst[v] = static_cast<float>(tq2_trit(b[i], v) - 1) * d;
    }
}

void quantize_row_tq1_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockTQ1_0*>(dst);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i, src += 256) {
        const float d = absmax(src, 256);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        for (int m = 0; m < 32; ++m) {
            int t = 0;
            for (int k = 0; k < 5; ++k) t = t * 3 + to_trit(src[32 * k + m], id);
            b[i].qs[m] = pack_trits(t);
        }
        for (int m = 0; m < 16; ++m) {
            int t = 0;
            for (int k = 0; k < 5; ++k) t = t * 3 + to_trit(src[160 + 16 * k + m], id);
            b[i].qs[32 + m] = pack_trits(t);
        }
        for (int j = 0; j < 4; ++j) {
            int t = 0;
            for (int k = 0; k < 4; ++k) t = t * 3 + to_trit(src[240 + 4 * k + j], id);
            b[i].qh[j] = pack_trits(t * 3);  // fifth (last) trit 0
        }
    }
}

void quantize_row_tq2_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockTQ2_0*>(dst);
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i, src += 256) {
        const float d = absmax(src, 256);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        for (int h = 0; h < 2; ++h) {
            for (int m = 0; m < 32; ++m) {
                int q = 0;
                for (int k = 0; k < 4; ++k) q |= (to_trit(src[128 * h + 32 * k + m], id) & 3) << (2 * k);
                b[i].qs[32 * h + m] = static_cast<uint8_t>(q);
            }
        }
    }
}

float dot_tq1_0_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockTQ1_0*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        int sumi = 0;
        for_each_tq1_trit(w[i], [&](int v, int t) { sumi += (t - 1) * a[i].qs[v]; });
        sum += static_cast<float>(sumi) * (fp16_to_fp32(w[i].d) * a[i].d);
    }
    return sum;
}

float dot_tq2_0_q8_k(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockTQ2_0*>(weights);
    const auto* a = static_cast<const BlockQ8_K*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = super_blocks(n); i < nb; ++i) {
        int sumi = 0;
        for (int v = 0; v < 256; ++v) sumi += (tq2_trit(w[i], v) - 1) * a[i].qs[v];
        sum += static_cast<float>(sumi) * (a[i].d * fp16_to_fp32(w[i].d));
    }
    return sum;
}

}  // namespace strata
