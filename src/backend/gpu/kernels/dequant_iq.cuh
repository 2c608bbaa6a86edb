#pragma once
// Device-side dequantization, 32 consecutive values at a time, of the formats that decode through
// lookup tables or pack values unevenly: the i-quants (IQ1_S .. IQ4_XS), the ternary formats
// (TQ1_0, TQ2_0), MXFP4, NVFP4 and the 64- and 128-value formats Q1_0 and Q2_0. kernels/dequant.cuh's dequant_chunk<T> hands these formats here, so
// every kernel reads them like the others. Each branch mirrors the format's scalar reference
// dequantizer (quant/iq1.cpp .. iq4.cpp, ternary.cpp, mxfp4.cpp, nvfp4.cpp, q1_0.cpp, q2_0.cpp) operation for operation; every
// value is a product of exactly converted factors (no multiply-add that a compiler could fuse), so
// the results equal the CPU reference bit for bit. Chunk c of a 256-value super-block format is
// its 32-group c % 8 (values 32·(c % 8) ..) of super-block c / 8; the block structs are the host's.
//
//   float v[32];
//   if constexpr (dequant_chunk_iq_reads(T)) dequant_chunk_iq<T>(row, chunk, v);

#include <cstdint>

#include "backend/gpu/kernels/quant_tables.cuh"
#include "backend/gpu/vendor/runtime.h"
#include "gguf/tensor_type.h"
#include "quant/iq1.h"
#include "quant/iq2.h"
#include "quant/iq3.h"
#include "quant/iq4.h"
#include "quant/mxfp4.h"
#include "quant/nvfp4.h"
#include "quant/q1_0.h"
#include "quant/q2_0.h"
#include "quant/ternary.h"

namespace strata::gpu {

// The formats dequant_chunk_iq<T> reads.
constexpr bool dequant_chunk_iq_reads(TensorType t) {
    using T = TensorType;
    switch (t) {
        case T::IQ1_S: case T::IQ1_M: case T::IQ2_XXS: case T::IQ2_XS: case T::IQ2_S: case T::IQ3_XXS:
        case T::IQ3_S: case T::IQ4_NL: case T::IQ4_XS: case T::TQ1_0: case T::TQ2_0: case T::MXFP4:
        case T::NVFP4: case T::Q1_0: case T::Q2_0:
            return true;
        default:
            return false;
    }
}

namespace iq_detail {

__device__ __forceinline__ float fp16(uint16_t h) { return vendor::half_bits_to_float(h); }

// Byte j of a grid entry: value j of its group (quant/iq_grids.h grid_byte).
template <typename E> __device__ __forceinline__ uint8_t grid_byte(E entry, int j) {
    return static_cast<uint8_t>(entry >> (8 * j));
}

// A little-endian uint32 that is only 2-byte aligned (the sign-and-scale words of IQ2_XXS, IQ3_XXS).
__device__ __forceinline__ uint32_t load_u32_at_u16(const uint8_t* p) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(p);
    return h[0] | (static_cast<uint32_t>(h[1]) << 16);
}

// IQ2 group of 8: scale · grid byte, negated where the sign mask has bit j (quant/iq2.cpp decode_group).
__device__ __forceinline__ void decode_iq2_group(float scale, uint64_t entry, uint8_t signs, float* dst) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const float x = scale * static_cast<float>(grid_byte(entry, j));
        dst[j] = (signs >> j) & 1 ? -x : x;
    }
}

// IQ3 group of 8 from two 4-value entries; sign bits 0-3 for the first, 4-7 for the second
// (quant/iq3.cpp decode_group).
__device__ __forceinline__ void decode_iq3_group(float scale, uint32_t first, uint32_t second, uint8_t signs, float* dst) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const float lo = scale * static_cast<float>(grid_byte(first, j));
        const float hi = scale * static_cast<float>(grid_byte(second, j));
        dst[j] = (signs >> j) & 1 ? -lo : lo;
        dst[j + 4] = (signs >> (j + 4)) & 1 ? -hi : hi;
    }
}

// IQ1 group of 8: dl·(grid + δ), grid bytes are int8 −1, 0, +1 (quant/iq1.cpp decode_group).
__device__ __forceinline__ void decode_iq1_group(float dl, float delta, uint64_t entry, float* dst) {
#pragma unroll
    for (int j = 0; j < 8; ++j) dst[j] = dl * (static_cast<float>(static_cast<int8_t>(grid_byte(entry, j))) + delta);
}

// IQ4 group of 32: d·level, low nibbles are values 0-15, high nibbles 16-31 (quant/iq4.cpp decode_group).
__device__ __forceinline__ void decode_iq4_group(float d, const uint8_t* qs, float* dst) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        dst[j] = d * static_cast<float>(tables::kIq4nlValues[qs[j] & 0xF]);
        dst[j + 16] = d * static_cast<float>(tables::kIq4nlValues[qs[j] >> 4]);
    }
}

// Trit k (0 = most significant) of a TQ1_0 byte, 0..2: ×3^k modulo 256 drops the leading trits
// of the fixed-point fraction, ×3 >> 8 takes the next (quant/ternary.cpp trit).
__device__ __forceinline__ int tq1_trit(uint8_t byte, int k) {
    const int pow3 = k == 0 ? 1 : k == 1 ? 3 : k == 2 ? 9 : k == 3 ? 27 : 81;
    const auto shifted = static_cast<uint8_t>(byte * pow3);
    return (shifted * 3) >> 8;
}

// Trit of value v (0..255) of a TQ1_0 block, in quant/ternary.h's layout.
__device__ __forceinline__ int tq1_value_trit(const BlockTQ1_0& b, int v) {
    if (v < 160) return tq1_trit(b.qs[v % 32], v / 32);
    if (v < 240) return tq1_trit(b.qs[32 + (v - 160) % 16], (v - 160) / 16);
    return tq1_trit(b.qh[(v - 240) % 4], (v - 240) / 4);
}

template <TensorType> inline constexpr bool kNoIqBranch = false;

}  // namespace iq_detail

// Half the value of an unsigned E4M3 scale byte, as quant/nvfp4.h's ue4m3_half (built from bits,
// exact): 0x00 and 0x7F give 0, exponent 0 is subnormal, bit 7 is ignored.
__device__ __forceinline__ float ue4m3_half_device(uint8_t x) {
    if (x == 0 || x == 0x7F) return 0.0f;
    const uint32_t exp = (x >> 3) & 0xF, man = x & 0x7;
    if (exp == 0) return static_cast<float>(man) * 0x1p-10f;
    return __uint_as_float(((exp + 119u) << 23) | (man << 20));
}

template <TensorType T>
__device__ __forceinline__ void dequant_chunk_iq(const uint8_t* row, int64_t chunk, float* v) {
    using TT = TensorType;
    using namespace iq_detail;
    if constexpr (T == TT::IQ1_S) {
        // quant/iq1.cpp dequantize_row_iq1_s. Per 32-group g: four 11-bit kIq1sGrid indices (low 8
        // bits in qs[4g + l], high 3 in qh[g] bits 3l..), scale code in qh[g] bits 12-14, δ's sign in bit 15.
        const BlockIq1S& b = reinterpret_cast<const BlockIq1S*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const uint16_t qh = b.qh[g];
        const float dl = fp16(b.d) * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
        const float delta = qh & 0x8000 ? -0.125f : 0.125f;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            decode_iq1_group(dl, delta, tables::kIq1sGrid[b.qs[4 * g + l] | (((qh >> (3 * l)) & 7) << 8)], v + 8 * l);
        }
    } else if constexpr (T == TT::IQ1_M) {
        // quant/iq1.cpp dequantize_row_iq1_m. The fp16 d is spread over the top nibbles of the four
        // little-endian scale words; the rest of word g/2 holds 3-bit scale codes per 16 values.
        // qh[2g + l/2] nibble (l % 2): 3 high index bits, then δ's sign.
        const BlockIq1M& b = reinterpret_cast<const BlockIq1M*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const auto word = [&](int k) { return static_cast<uint16_t>(b.scales[2 * k] | (b.scales[2 * k + 1] << 8)); };
        const auto d_bits = static_cast<uint16_t>((word(0) >> 12) | ((word(1) >> 8) & 0x00F0) |
                                                  ((word(2) >> 4) & 0x0F00) | (word(3) & 0xF000));
        const float d = fp16(d_bits);
        const uint16_t codes = word(g / 2);
        const float dl[2] = {d * static_cast<float>(2 * ((codes >> (6 * (g % 2))) & 7) + 1),
                             d * static_cast<float>(2 * ((codes >> (6 * (g % 2) + 3)) & 7) + 1)};
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const int nibble = (b.qh[2 * g + l / 2] >> (4 * (l % 2))) & 0xF;
            const float delta = nibble & 8 ? -0.125f : 0.125f;
            decode_iq1_group(dl[l / 2], delta, tables::kIq1sGrid[b.qs[4 * g + l] | ((nibble & 7) << 8)], v + 8 * l);
        }
    } else if constexpr (T == TT::IQ2_XXS) {
        // quant/iq2.cpp dequantize_row_iq2_xxs. 32-group g is qs[8g..8g+7]: four kIq2xxsGrid indices,
        // then a uint32 of four 7-bit sign codes and, in bits 28-31, the scale s: d·(s + ½)·¼.
        const BlockIq2Xxs& b = reinterpret_cast<const BlockIq2Xxs*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const uint8_t* q = b.qs + 8 * g;
        const uint32_t signs_and_scale = load_u32_at_u16(q + 4);
        const float scale = fp16(b.d) * (0.5f + static_cast<float>(signs_and_scale >> 28)) * 0.25f;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            decode_iq2_group(scale, tables::kIq2xxsGrid[q[l]], tables::kIq2SignTable[(signs_and_scale >> (7 * l)) & 127],
                             v + 8 * l);
        }
    } else if constexpr (T == TT::IQ2_XS) {
        // quant/iq2.cpp dequantize_row_iq2_xs. Group of 8 l of 32-group g: uint16 qs[4g + l], 9-bit
        // kIq2xsGrid index and 7-bit sign code; scales[g] nibbles scale values 0-15 and 16-31.
        const BlockIq2Xs& b = reinterpret_cast<const BlockIq2Xs*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const float d = fp16(b.d);
        const float scales[2] = {d * (0.5f + static_cast<float>(b.scales[g] & 0xF)) * 0.25f,
                                 d * (0.5f + static_cast<float>(b.scales[g] >> 4)) * 0.25f};
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const uint16_t q = b.qs[4 * g + l];
            decode_iq2_group(scales[l / 2], tables::kIq2xsGrid[q & 511], tables::kIq2SignTable[q >> 9], v + 8 * l);
        }
    } else if constexpr (T == TT::IQ2_S) {
        // quant/iq2.cpp dequantize_row_iq2_s. 10-bit kIq2sGrid indices (low 8 bits in qs[4g + l],
        // high 2 in qh[g] bits 2l..), a whole sign byte per group of 8 in qs[32..63]; scales as IQ2_XS.
        const BlockIq2S& b = reinterpret_cast<const BlockIq2S*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const float d = fp16(b.d);
        const float scales[2] = {d * (0.5f + static_cast<float>(b.scales[g] & 0xF)) * 0.25f,
                                 d * (0.5f + static_cast<float>(b.scales[g] >> 4)) * 0.25f};
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const int index = b.qs[4 * g + l] | (((b.qh[g] >> (2 * l)) & 3) << 8);
            decode_iq2_group(scales[l / 2], tables::kIq2sGrid[index], b.qs[32 + 4 * g + l], v + 8 * l);
        }
    } else if constexpr (T == TT::IQ3_XXS) {
        // quant/iq3.cpp dequantize_row_iq3_xxs. qs[8g..8g+7]: two kIq3xxsGrid indices per group of 8;
        // qs[64 + 4g]: uint32 of four 7-bit sign codes and the scale s in bits 28-31: d·(s + ½)·½.
        const BlockIq3Xxs& b = reinterpret_cast<const BlockIq3Xxs*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const uint8_t* q = b.qs + 8 * g;
        const uint32_t signs_and_scale = load_u32_at_u16(b.qs + 64 + 4 * g);
        const float scale = fp16(b.d) * (0.5f + static_cast<float>(signs_and_scale >> 28)) * 0.5f;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            decode_iq3_group(scale, tables::kIq3xxsGrid[q[2 * l]], tables::kIq3xxsGrid[q[2 * l + 1]],
                             tables::kIq2SignTable[(signs_and_scale >> (7 * l)) & 127], v + 8 * l);
        }
    } else if constexpr (T == TT::IQ3_S) {
        // quant/iq3.cpp dequantize_row_iq3_s. 9-bit kIq3sGrid indices (qs[8g + k], ninth bit = bit k
        // of qh[g]), a sign byte per group of 8, 4-bit scale codes two per byte: d·(2s + 1).
        const BlockIq3S& b = reinterpret_cast<const BlockIq3S*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const int code = (b.scales[g / 2] >> (4 * (g % 2))) & 0xF;
        const float scale = fp16(b.d) * static_cast<float>(1 + 2 * code);
        const auto index = [&](int k) { return b.qs[8 * g + k] | (((b.qh[g] >> k) & 1) << 8); };
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            decode_iq3_group(scale, tables::kIq3sGrid[index(2 * l)], tables::kIq3sGrid[index(2 * l + 1)],
                             b.signs[4 * g + l], v + 8 * l);
        }
    } else if constexpr (T == TT::IQ4_NL) {
        // quant/iq4.cpp dequantize_row_iq4_nl: 32-value blocks, fp16 d and 16 bytes of level codes.
        const BlockIq4Nl& b = reinterpret_cast<const BlockIq4Nl*>(row)[chunk];
        decode_iq4_group(fp16(b.d), b.qs, v);
    } else if constexpr (T == TT::IQ4_XS) {
        // quant/iq4.cpp dequantize_row_iq4_xs: 32-group g is IQ4_NL-like with the 6-bit signed scale
        // (scales_l[g/2] nibble g % 2, plus bits 2g.. of scales_h as bits 4-5) − 32 times d.
        const BlockIq4Xs& b = reinterpret_cast<const BlockIq4Xs*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const int code = ((b.scales_l[g / 2] >> (4 * (g % 2))) & 0xF) | (((b.scales_h >> (2 * g)) & 3) << 4);
        decode_iq4_group(fp16(b.d) * static_cast<float>(code - 32), b.qs + 16 * g, v);
    } else if constexpr (T == TT::TQ1_0) {
        // quant/ternary.cpp dequantize_row_tq1_0: (t − 1)·d, five trits per byte (quant/ternary.h).
        const BlockTQ1_0& b = reinterpret_cast<const BlockTQ1_0*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const float d = fp16(b.d);
#pragma unroll
        for (int i = 0; i < 32; ++i) v[i] = static_cast<float>(tq1_value_trit(b, 32 * g + i) - 1) * d;
    } else if constexpr (T == TT::TQ2_0) {
        // quant/ternary.cpp dequantize_row_tq2_0: (t − 1)·d; value 128h + 32k + m is bits 2k.. of qs[32h + m].
        const BlockTQ2_0& b = reinterpret_cast<const BlockTQ2_0*>(row)[chunk / 8];
        const int g = static_cast<int>(chunk % 8);
        const float d = fp16(b.d);
        const uint8_t* q = b.qs + 32 * (g / 4);
        const int shift = 2 * (g % 4);
#pragma unroll
        for (int m = 0; m < 32; ++m) v[m] = static_cast<float>(((q[m] >> shift) & 3) - 1) * d;
    } else if constexpr (T == TT::MXFP4) {
        // quant/mxfp4.cpp dequantize_row_mxfp4: 32-value blocks, E8M0 exponent e and 16 bytes of E2M1
        // codes (values j, j + 16 in the low, high nibble of qs[j]). The doubled table values meet
        // the halved scale 2^(e − 128); e = 0 and 1 give float subnormals, built by bits.
        const BlockMxfp4& b = reinterpret_cast<const BlockMxfp4*>(row)[chunk];
        const uint32_t bits = b.e < 2 ? (0x00200000u << b.e) : (static_cast<uint32_t>(b.e - 1) << 23);
        const float d = __uint_as_float(bits);
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            v[j] = static_cast<float>(tables::kE2M1Doubled[b.qs[j] & 0x0F]) * d;
            v[j + 16] = static_cast<float>(tables::kE2M1Doubled[b.qs[j] >> 4]) * d;
        }
    } else if constexpr (T == TT::NVFP4) {
        // quant/nvfp4.cpp dequantize_row_nvfp4: chunk c is sub-blocks 2(c % 2) and 2(c % 2) + 1 of
        // block c / 2; a sub-block's low nibbles are its values 0-7, the high ones 8-15.
        const BlockNvfp4& b = reinterpret_cast<const BlockNvfp4*>(row)[chunk / 2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int s = 2 * static_cast<int>(chunk % 2) + h;
            const float d = ue4m3_half_device(b.d[s]);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const uint8_t q = b.qs[8 * s + j];
                v[16 * h + j] = static_cast<float>(tables::kE2M1Doubled[q & 0x0F]) * d;
                v[16 * h + 8 + j] = static_cast<float>(tables::kE2M1Doubled[q >> 4]) * d;
            }
        }
    } else if constexpr (T == TT::Q1_0) {
        // quant/q1_0.cpp dequantize_row_q1_0: ±d by bit j % 8 of qs[j / 8]; chunk c is values
        // 32(c % 4) .. of block c / 4.
        const BlockQ1_0& b = reinterpret_cast<const BlockQ1_0*>(row)[chunk / 4];
        const float d = fp16(b.d), neg_d = -d;
        const uint8_t* q = b.qs + 4 * (chunk % 4);
#pragma unroll
        for (int i = 0; i < 32; ++i) v[i] = (q[i / 8] >> (i % 8)) & 1 ? d : neg_d;
    } else if constexpr (T == TT::Q2_0) {
        // quant/q2_0.cpp dequantize_row_q2_0: (code − 1)·d, code j at bits 2(j % 4) of qs[j / 4];
        // chunk c is values 32(c % 2) .. of block c / 2.
        const BlockQ2_0& b = reinterpret_cast<const BlockQ2_0*>(row)[chunk / 2];
        const float d = fp16(b.d);
        const uint8_t* q = b.qs + 8 * (chunk % 2);
#pragma unroll
        for (int i = 0; i < 32; ++i) v[i] = static_cast<float>(((q[i / 4] >> (2 * (i % 4))) & 3) - 1) * d;
    } else {
        static_assert(kNoIqBranch<T>, "dequant_chunk_iq: no branch for this format");
    }
}

}  // namespace strata::gpu
