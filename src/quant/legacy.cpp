// Scalar reference code of the legacy formats. Float operations follow ggml's plain C in kind and
// order (the library is built with -ffp-contract=off), which is what makes dequantized values and
// quantized bytes match the reference vectors exactly.
#include "quant/legacy.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "core/check.h"
#include "core/fp16.h"

namespace strata {

namespace {

int64_t block_count(int64_t n) {
    STRATA_CHECK(n % 32 == 0, "legacy quant rows hold a multiple of 32 values");
    return n / 32;
}

uint32_t load_qh(const uint8_t* qh) {
    uint32_t v;
    std::memcpy(&v, qh, sizeof(v));
    return v;
}

void store_qh(uint8_t* qh, uint32_t v) { std::memcpy(qh, &v, sizeof(v)); }

// The fifth bits of Q5 values j and j+16 (as 0 or 0x10).
uint8_t high_bit_lo(uint32_t qh, int j) { return static_cast<uint8_t>(((qh >> j) << 4) & 0x10); }
uint8_t high_bit_hi(uint32_t qh, int j) { return static_cast<uint8_t>((qh >> (j + 12)) & 0x10); }

// The value of largest magnitude, with its sign: the symmetric formats map it to the most
// negative quant (−8 or −16), which has no positive counterpart, to use the full range.
float signed_absmax(const float* x, int count) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < count; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

void min_max(const float* x, int count, float* min_out, float* max_out) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < count; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    *min_out = min;
    *max_out = max;
}

float absmax(const float* x, int count) {
    float amax = 0.0f;
    for (int j = 0; j < count; ++j) amax = std::max(amax, std::fabs(x[j]));
    return amax;
}

}  // namespace

// ---- dequantize -------------------------------------------------------------------------------

void dequantize_row_q4_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ4_0*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += 32) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < 16; ++j) {
            dst[j] = static_cast<float>((b[i].qs[j] & 0x0F) - 8) * d;
            dst[j + 16] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantize_row_q4_1(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ4_1*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += 32) {
        const float d = fp16_to_fp32(b[i].d);
        const float m = fp16_to_fp32(b[i].m);
        for (int j = 0; j < 16; ++j) {
            dst[j] = static_cast<float>(b[i].qs[j] & 0x0F) * d + m;
            dst[j + 16] = static_cast<float>(b[i].qs[j] >> 4) * d + m;
        }
    }
}

void dequantize_row_q5_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ5_0*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += 32) {
        const float d = fp16_to_fp32(b[i].d);
        const uint32_t qh = load_qh(b[i].qh);
        for (int j = 0; j < 16; ++j) {
            const int q0 = ((b[i].qs[j] & 0x0F) | high_bit_lo(qh, j)) - 16;
            const int q1 = ((b[i].qs[j] >> 4) | high_bit_hi(qh, j)) - 16;
            dst[j] = static_cast<float>(q0) * d;
            dst[j + 16] = static_cast<float>(q1) * d;
        }
    }
}

void dequantize_row_q5_1(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ5_1*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += 32) {
        const float d = fp16_to_fp32(b[i].d);
        const float m = fp16_to_fp32(b[i].m);
        const uint32_t qh = load_qh(b[i].qh);
        for (int j = 0; j < 16; ++j) {
            const int q0 = (b[i].qs[j] & 0x0F) | high_bit_lo(qh, j);
            const int q1 = (b[i].qs[j] >> 4) | high_bit_hi(qh, j);
            dst[j] = static_cast<float>(q0) * d + m;
            dst[j + 16] = static_cast<float>(q1) * d + m;
        }
    }
}

void dequantize_row_q8_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ8_0*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += 32) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < 32; ++j) dst[j] = static_cast<float>(b[i].qs[j]) * d;
    }
}

void dequantize_row_q8_1(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const BlockQ8_1*>(src);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, dst += 32) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < 32; ++j) dst[j] = static_cast<float>(b[i].qs[j]) * d;
    }
}

// ---- quantize ---------------------------------------------------------------------------------
// The 4/5-bit quantizers round by adding 0.5 (plus the offset) and truncating, Q8 by roundf; both
// are ggml's choices and both matter for byte equality.

void quantize_row_q4_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ4_0*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += 32) {
        const float d = signed_absmax(src, 32) / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        for (int j = 0; j < 16; ++j) {
            const int q0 = std::min(15, static_cast<int>(src[j] * id + 8.5f));
            const int q1 = std::min(15, static_cast<int>(src[j + 16] * id + 8.5f));
            b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_row_q4_1(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ4_1*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += 32) {
        float min, max;
        min_max(src, 32, &min, &max);
        const float d = (max - min) / 15;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        b[i].m = fp32_to_fp16(min);
        for (int j = 0; j < 16; ++j) {
            const int q0 = std::min(15, static_cast<int>((src[j] - min) * id + 0.5f));
            const int q1 = std::min(15, static_cast<int>((src[j + 16] - min) * id + 0.5f));
            b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_row_q5_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ5_0*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += 32) {
        const float d = signed_absmax(src, 32) / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < 16; ++j) {
            const int q0 = std::min(31, static_cast<int>(src[j] * id + 16.5f));
            const int q1 = std::min(31, static_cast<int>(src[j + 16] * id + 16.5f));
            b[i].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= static_cast<uint32_t>(q0 >> 4) << j;
            qh |= static_cast<uint32_t>(q1 >> 4) << (j + 16);
        }
        store_qh(b[i].qh, qh);
    }
}

void quantize_row_q5_1(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ5_1*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += 32) {
        float min, max;
        min_max(src, 32, &min, &max);
        const float d = (max - min) / 31;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        b[i].m = fp32_to_fp16(min);
        uint32_t qh = 0;
        for (int j = 0; j < 16; ++j) {
            // No clamp: (max − min)·id rounds to at most 31.5, which truncates to 31.
            const int q0 = static_cast<int>((src[j] - min) * id + 0.5f);
            const int q1 = static_cast<int>((src[j + 16] - min) * id + 0.5f);
            b[i].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= static_cast<uint32_t>((q0 & 0x10) >> 4) << j;
            qh |= static_cast<uint32_t>((q1 & 0x10) >> 4) << (j + 16);
        }
        store_qh(b[i].qh, qh);
    }
}

void quantize_row_q8_0(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ8_0*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += 32) {
        const float d = absmax(src, 32) / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        for (int j = 0; j < 32; ++j) b[i].qs[j] = static_cast<int8_t>(std::round(src[j] * id));
    }
}

void quantize_row_q8_1(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<BlockQ8_1*>(dst);
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i, src += 32) {
        const float d = absmax(src, 32) / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
            b[i].qs[j] = static_cast<int8_t>(std::round(src[j] * id));
            sum += b[i].qs[j];
        }
        b[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
    }
}

// ---- dot products -----------------------------------------------------------------------------
// Integer products per block, then one float multiply-add per block, as ggml's generic kernels.

float dot_q4_0_q8_0(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ4_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < 16; ++j) {
            sumi += ((w[i].qs[j] & 0x0F) - 8) * a[i].qs[j];
            sumi += ((w[i].qs[j] >> 4) - 8) * a[i].qs[j + 16];
        }
        sum += static_cast<float>(sumi) * fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d);
    }
    return sum;
}

float dot_q4_1_q8_1(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ4_1*>(weights);
    const auto* a = static_cast<const BlockQ8_1*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < 16; ++j) {
            sumi += (w[i].qs[j] & 0x0F) * a[i].qs[j];
            sumi += (w[i].qs[j] >> 4) * a[i].qs[j + 16];
        }
        // Σ(d_w·q_w + m)·d_a·q_a = d_w·d_a·Σq_w·q_a + m·s_a
        sum += fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d) * static_cast<float>(sumi) +
               fp16_to_fp32(w[i].m) * fp16_to_fp32(a[i].s);
    }
    return sum;
}

float dot_q5_0_q8_0(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ5_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const uint32_t qh = load_qh(w[i].qh);
        int sumi = 0;
        for (int j = 0; j < 16; ++j) {
            sumi += (((w[i].qs[j] & 0x0F) | high_bit_lo(qh, j)) - 16) * a[i].qs[j];
            sumi += (((w[i].qs[j] >> 4) | high_bit_hi(qh, j)) - 16) * a[i].qs[j + 16];
        }
        sum += fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d) * static_cast<float>(sumi);
    }
    return sum;
}

float dot_q5_1_q8_1(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ5_1*>(weights);
    const auto* a = static_cast<const BlockQ8_1*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        const uint32_t qh = load_qh(w[i].qh);
        int sumi = 0;
        for (int j = 0; j < 16; ++j) {
            sumi += ((w[i].qs[j] & 0x0F) | high_bit_lo(qh, j)) * a[i].qs[j];
            sumi += ((w[i].qs[j] >> 4) | high_bit_hi(qh, j)) * a[i].qs[j + 16];
        }
        sum += fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d) * static_cast<float>(sumi) +
               fp16_to_fp32(w[i].m) * fp16_to_fp32(a[i].s);
    }
    return sum;
}

float dot_q8_0_q8_0(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const BlockQ8_0*>(weights);
    const auto* a = static_cast<const BlockQ8_0*>(activation);
    float sum = 0.0f;
    for (int64_t i = 0, nb = block_count(n); i < nb; ++i) {
        int sumi = 0;
        for (int j = 0; j < 32; ++j) sumi += w[i].qs[j] * a[i].qs[j];
        sum += static_cast<float>(sumi) * (fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d));
    }
    return sum;
}

}  // namespace strata
