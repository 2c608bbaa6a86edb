#pragma once
// Dot products of packed weights with int8 activations (GpuQ8Rows: blocks of 32 values, q = x / d
// rounded, with (d, d·Σq) per block), for the matrix-vector kernel of ops_matvec_q8.cu. The
// weights stay packed: their quants are widened to bytes in registers and multiplied four at a
// time by vendor::dot4_i8 (dp4a / sdot4), and each block's scales and offsets are applied once to
// the integer sums. Offsets (Q4_0's −8, Q4_K's −dmin·m, ...) go through the activation block's
// d·Σq, so no per-value subtraction is needed.
//
// A lane handles one "unit" of a row at a time: 32 values for the legacy formats (one block),
// 64 for the K-quants (two 32-value sub-blocks that share their packed bytes: the low and high
// nibbles of Q4_K's 32 quant bytes, two of Q6_K's four groups). Per format:
//   Q8Dot<T>::kUnitValues                   values per unit
//   Q8Dot<T>::Unit w = Q8Dot<T>::load(row, u)   the unit's quants and scales, in registers
//   float s = Q8Dot<T>::dot(w, xq, ds, u)       its product with one activation row
// where xq and ds point at the start of the activation row. Each format mirrors its scalar
// reference dequantizer (quant/legacy.cpp, quant/k_quants.cpp) and dequant.cuh.

#include <cstdint>

#include "backend/gpu/kernels/dequant.cuh"
#include "backend/gpu/kernels/quant_tables.cuh"
#include "backend/gpu/vendor/runtime.h"

namespace strata::gpu {

// N 32-bit words from a word-aligned address.
template <int N> __device__ __forceinline__ void load_words_a4(const uint8_t* p, int* out) {
    const int* w = reinterpret_cast<const int*>(p);
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = w[i];
}

// N 32-bit words from an address that is only 2-byte aligned (the legacy blocks are 18, 20, 22 or
// 34 bytes, Q6_K 210: half their blocks start off a word boundary).
template <int N> __device__ __forceinline__ void load_words_a2(const uint8_t* p, int* out) {
    if ((reinterpret_cast<uintptr_t>(p) & 3) == 0) return load_words_a4<N>(p, out);
    const uint16_t* h = reinterpret_cast<const uint16_t*>(p);
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = static_cast<int>(h[2 * i] | (static_cast<uint32_t>(h[2 * i + 1]) << 16));
}

// N 32-bit words from an address that is only 2-byte aligned, by N + 1 aligned word loads joined
// by funnel shifts where the address is off a word boundary (half the loads of 16-bit pieces).
// It reads the 2 bytes before p and the 2 after p + 4N then: the caller guarantees they lie in
// the same block (Q6_K's ql and qh are followed by more of the block and preceded by it or by
// the previous block).
template <int N> __device__ __forceinline__ void load_words_a2_inner(const uint8_t* p, int* out) {
    if ((reinterpret_cast<uintptr_t>(p) & 3) == 0) return load_words_a4<N>(p, out);
    const uint32_t* w = reinterpret_cast<const uint32_t*>(p - 2);
    uint32_t words[N + 1];
#pragma unroll
    for (int i = 0; i <= N; ++i) words[i] = w[i];
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = static_cast<int>((words[i] >> 16) | (words[i + 1] << 16));
}

// N words from a 16-byte-aligned address.
template <int N> __device__ __forceinline__ void load_words_a16(const uint8_t* p, int* out) {
    const int4* v = reinterpret_cast<const int4*>(p);
#pragma unroll
    for (int i = 0; i < N / 4; ++i) {
        const int4 a = v[i];
        out[4 * i] = a.x, out[4 * i + 1] = a.y, out[4 * i + 2] = a.z, out[4 * i + 3] = a.w;
    }
}

// Σ over 4·N bytes of q · x, x the activation words.
template <int N> __device__ __forceinline__ int dot_words(const int* q, const int* x) {
    int s = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) s = vendor::dot4_i8(q[i], x[i], s);
    return s;
}

// Bits `shift`.. of each byte's value, `bits` wide (0x0F0F0F0F-style masks).
__device__ __forceinline__ int byte_field(int word, int shift, uint32_t mask) {
    return static_cast<int>((static_cast<uint32_t>(word) >> shift) & mask);
}

// The five-bit legacy formats keep bit j of a 32-bit word as value j's high bit; spread four of
// them (values 4i .. 4i + 3, starting at bit `first`) to bit 4 of four bytes.
__device__ __forceinline__ int high_bits_to_bytes(uint32_t qh, int first) {
    const uint32_t b = qh >> first;
    return static_cast<int>(((b & 1u) << 4) | ((b & 2u) << 11) | ((b & 4u) << 18) | ((b & 8u) << 25));
}

// Activation chunk c of a row: its 8 words and (d, d·Σq).
__device__ __forceinline__ void load_x_chunk(const int8_t* xq, const float* ds, int64_t c, int* x, float& d, float& s) {
    load_words_a16<8>(reinterpret_cast<const uint8_t*>(xq + 32 * c), x);
    const float2 v = reinterpret_cast<const float2*>(ds)[c];
    d = v.x, s = v.y;
}

template <TensorType T> struct Q8Dot;

// Q8_0: value = d·q.
template <> struct Q8Dot<TensorType::Q8_0> {
    static constexpr int kUnitValues = 32;
    struct Unit { int q[8]; float d; };
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        const BlockQ8_0& b = reinterpret_cast<const BlockQ8_0*>(row)[u];
        Unit w;
        load_words_a2<8>(reinterpret_cast<const uint8_t*>(b.qs), w.q);
        w.d = h2f(b.d);
        return w;
    }
    __device__ static float dot(const Unit& w, const int8_t* xq, const float* ds, int64_t u) {
        int x[8];
        float dx, sx;
        load_x_chunk(xq, ds, u, x, dx, sx);
        return w.d * dx * static_cast<float>(dot_words<8>(w.q, x));
    }
};

// The legacy 4- and 5-bit formats, once unpacked: values 0-15 of the block as bytes in lo,
// values 16-31 in hi, value = d·q + m (Q4_0 and Q5_0 fold their −8 / −16 into m = −8d / −16d).
struct Q8DotLegacyUnit {
    static constexpr int kUnitValues = 32;
    struct Unit { int lo[4], hi[4]; float d, m; };
    __device__ static float dot(const Unit& w, const int8_t* xq, const float* ds, int64_t u) {
        int x[8];
        float dx, sx;
        load_x_chunk(xq, ds, u, x, dx, sx);
        const int s = dot_words<4>(w.lo, x) + dot_words<4>(w.hi, x + 4);
        return w.d * dx * static_cast<float>(s) + w.m * sx;  // Σ (d·q + m)·x, Σx = d_x·Σq_x
    }
};

// Q4_0 (d·(q − 8)) and Q4_1 (d·q + m): value j's nibble is the low one of byte j (j < 16) or the
// high one of byte j − 16.
template <TensorType T> struct Q8DotNibbles : Q8DotLegacyUnit {
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        using B = std::conditional_t<T == TensorType::Q4_0, BlockQ4_0, BlockQ4_1>;
        const B& b = reinterpret_cast<const B*>(row)[u];
        int q[4];
        load_words_a2<4>(b.qs, q);
        Unit w;
#pragma unroll
        for (int i = 0; i < 4; ++i) w.lo[i] = byte_field(q[i], 0, 0x0F0F0F0Fu), w.hi[i] = byte_field(q[i], 4, 0x0F0F0F0Fu);
        w.d = h2f(b.d);
        if constexpr (T == TensorType::Q4_1) w.m = h2f(b.m);
        else w.m = -8.0f * w.d;
        return w;
    }
};
template <> struct Q8Dot<TensorType::Q4_0> : Q8DotNibbles<TensorType::Q4_0> {};
template <> struct Q8Dot<TensorType::Q4_1> : Q8DotNibbles<TensorType::Q4_1> {};

// IQ4_NL (d·level[q], quant/iq4.cpp) and MXFP4 (2^(e−128)·doubled E2M1 level[q], quant/mxfp4.cpp):
// 32-value blocks whose nibbles pick signed int8 levels from a table; value j is the level of
// qs[j]'s low nibble (j < 16) or of qs[j − 16]'s high one. The levels are packed four per word
// for dot4_i8, the block's scale is d and there is no offset (m = 0). MXFP4's blocks are 17 bytes,
// so its codes are read byte by byte.
template <TensorType T> struct Q8DotTable : Q8DotLegacyUnit {
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        const uint8_t* qs;
        const int8_t* level;
        Unit w;
        if constexpr (T == TensorType::IQ4_NL) {
            const BlockIq4Nl& b = reinterpret_cast<const BlockIq4Nl*>(row)[u];
            qs = b.qs, level = tables::kIq4nlValues;
            w.d = h2f(b.d);
        } else {
            const BlockMxfp4& b = reinterpret_cast<const BlockMxfp4*>(row)[u];
            qs = b.qs, level = tables::kE2M1Doubled;
            w.d = __uint_as_float(b.e < 2 ? (0x00200000u << b.e) : (static_cast<uint32_t>(b.e - 1) << 23));
        }
        w.m = 0.0f;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            uint32_t lo = 0, hi = 0;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const uint8_t q = qs[4 * i + k];
                lo |= static_cast<uint32_t>(static_cast<uint8_t>(level[q & 0x0F])) << (8 * k);
                hi |= static_cast<uint32_t>(static_cast<uint8_t>(level[q >> 4])) << (8 * k);
            }
            w.lo[i] = static_cast<int>(lo), w.hi[i] = static_cast<int>(hi);
        }
        return w;
    }
};
template <> struct Q8Dot<TensorType::IQ4_NL> : Q8DotTable<TensorType::IQ4_NL> {};
template <> struct Q8Dot<TensorType::MXFP4> : Q8DotTable<TensorType::MXFP4> {};

// Four 2-bit codes of a byte (values 4k .. 4k + 3 of Q2_0) to the four bytes of a word.
__device__ __forceinline__ int codes2_to_bytes(uint32_t b) {
    return static_cast<int>((b & 0x03u) | ((b & 0x0Cu) << 6) | ((b & 0x30u) << 12) | ((b & 0xC0u) << 18));
}
// Four sign bits of Q1_0 (bits 0-3 of `n`) to bytes of 0 or 1.
__device__ __forceinline__ int bits_to_bytes(uint32_t n) {
    return static_cast<int>((n & 1u) | ((n & 2u) << 7) | ((n & 4u) << 14) | ((n & 8u) << 21));
}

// Q1_0 (quant/q1_0.h, ±d per sign bit): a unit is one 32-value chunk of a 128-value block. The
// bits become bytes b ∈ {0, 1}: Σ d·(2b − 1)·x = 2d·Σ b·x − d·Σx.
template <> struct Q8Dot<TensorType::Q1_0> {
    static constexpr int kUnitValues = 32;
    struct Unit { int q[8]; float d; };
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        const BlockQ1_0& b = reinterpret_cast<const BlockQ1_0*>(row)[u / 4];
        int bits;
        load_words_a2<1>(b.qs + 4 * (u % 4), &bits);
        Unit w;
#pragma unroll
        for (int i = 0; i < 8; ++i) w.q[i] = bits_to_bytes(static_cast<uint32_t>(bits) >> (4 * i));
        w.d = h2f(b.d);
        return w;
    }
    __device__ static float dot(const Unit& w, const int8_t* xq, const float* ds, int64_t u) {
        int x[8];
        float dx, sx;
        load_x_chunk(xq, ds, u, x, dx, sx);
        return 2.0f * w.d * dx * static_cast<float>(dot_words<8>(w.q, x)) - w.d * sx;
    }
};

// Q2_0 (quant/q2_0.h, (code − 1)·d): a unit is one 64-value block, two chunks of codes as bytes;
// Σ d·(c − 1)·x = d·Σ c·x − d·Σx.
template <> struct Q8Dot<TensorType::Q2_0> {
    static constexpr int kUnitValues = 64;
    struct Unit { int q0[8], q1[8]; float d; };
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        const BlockQ2_0& b = reinterpret_cast<const BlockQ2_0*>(row)[u];
        int q[4];
        load_words_a2<4>(b.qs, q);
        Unit w;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const int out = codes2_to_bytes((static_cast<uint32_t>(q[i]) >> (8 * k)) & 0xFF);
                if (i < 2) w.q0[4 * i + k] = out;
                else w.q1[4 * (i - 2) + k] = out;
            }
        }
        w.d = h2f(b.d);
        return w;
    }
    __device__ static float dot(const Unit& w, const int8_t* xq, const float* ds, int64_t u) {
        int x[8];
        float dx0, sx0, dx1, sx1;
        load_x_chunk(xq, ds, 2 * u, x, dx0, sx0);
        const int s0 = dot_words<8>(w.q0, x);
        load_x_chunk(xq, ds, 2 * u + 1, x, dx1, sx1);
        const int s1 = dot_words<8>(w.q1, x);
        return w.d * (dx0 * static_cast<float>(s0) + dx1 * static_cast<float>(s1) - (sx0 + sx1));
    }
};

// NVFP4 (quant/nvfp4.h): a unit is one 64-value block of four 16-value sub-blocks, each with its
// E4M3 scale; the codes become signed doubled E2M1 levels in value order (a sub-block's low
// nibbles, then its high ones), four per word.
template <> struct Q8Dot<TensorType::NVFP4> {
    static constexpr int kUnitValues = 64;
    struct Unit { int q[16]; float s[4]; };
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        const BlockNvfp4& b = reinterpret_cast<const BlockNvfp4*>(row)[u];
        int c[8];
        load_words_a4<8>(b.qs, c);
        Unit w;
#pragma unroll
        for (int i = 0; i < 8; ++i) {  // word i: bytes 4i .. 4i + 3 of sub-block i / 2
            uint32_t lo = 0, hi = 0;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const uint32_t q = (static_cast<uint32_t>(c[i]) >> (8 * k)) & 0xFF;
                lo |= static_cast<uint32_t>(static_cast<uint8_t>(tables::kE2M1Doubled[q & 0x0F])) << (8 * k);
                hi |= static_cast<uint32_t>(static_cast<uint8_t>(tables::kE2M1Doubled[q >> 4])) << (8 * k);
            }
            const int sub = i / 2, half = i % 2;
            w.q[4 * sub + half] = static_cast<int>(lo), w.q[4 * sub + 2 + half] = static_cast<int>(hi);
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) w.s[j] = ue4m3_half_device(b.d[j]);
        return w;
    }
    __device__ static float dot(const Unit& w, const int8_t* xq, const float* ds, int64_t u) {
        int x[8];
        float dx0, sx0, dx1, sx1;
        load_x_chunk(xq, ds, 2 * u, x, dx0, sx0);
        const float a = w.s[0] * static_cast<float>(dot_words<4>(w.q, x)) + w.s[1] * static_cast<float>(dot_words<4>(w.q + 4, x + 4));
        load_x_chunk(xq, ds, 2 * u + 1, x, dx1, sx1);
        const float b = w.s[2] * static_cast<float>(dot_words<4>(w.q + 8, x)) + w.s[3] * static_cast<float>(dot_words<4>(w.q + 12, x + 4));
        return dx0 * a + dx1 * b;
    }
};

// Q5_0 (d·(q − 16)) and Q5_1 (d·q + m): Q4's nibbles plus bit j of qh as value j's bit 4.
template <TensorType T> struct Q8DotFiveBit : Q8DotLegacyUnit {
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        using B = std::conditional_t<T == TensorType::Q5_0, BlockQ5_0, BlockQ5_1>;
        const B& b = reinterpret_cast<const B*>(row)[u];
        int q[4], qh;
        load_words_a2<4>(b.qs, q);
        load_words_a2<1>(b.qh, &qh);
        Unit w;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            w.lo[i] = byte_field(q[i], 0, 0x0F0F0F0Fu) | high_bits_to_bytes(static_cast<uint32_t>(qh), 4 * i);
            w.hi[i] = byte_field(q[i], 4, 0x0F0F0F0Fu) | high_bits_to_bytes(static_cast<uint32_t>(qh), 16 + 4 * i);
        }
        w.d = h2f(b.d);
        if constexpr (T == TensorType::Q5_1) w.m = h2f(b.m);
        else w.m = -16.0f * w.d;
        return w;
    }
};
template <> struct Q8Dot<TensorType::Q5_0> : Q8DotFiveBit<TensorType::Q5_0> {};
template <> struct Q8Dot<TensorType::Q5_1> : Q8DotFiveBit<TensorType::Q5_1> {};

// Q4_K and Q5_K: unit j of a super-block is sub-blocks 2j (low nibbles of qs[32j ..]) and 2j + 1
// (high nibbles); value = d·sc·q − dmin·m per sub-block; Q5_K's bit 4 is bit s of qh[l].
template <TensorType T> struct Q8DotK4 {
    static constexpr int kUnitValues = 64;
    struct Unit { int q0[8], q1[8]; float d0, d1, m0, m1; };
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        using B = std::conditional_t<T == TensorType::Q4_K, BlockQ4_K, BlockQ5_K>;
        const B& b = reinterpret_cast<const B*>(row)[u / 4];
        const int j = static_cast<int>(u % 4);
        int q[8];
        load_words_a16<8>(b.qs + 32 * j, q);
        Unit w;
#pragma unroll
        for (int i = 0; i < 8; ++i) w.q0[i] = byte_field(q[i], 0, 0x0F0F0F0Fu), w.q1[i] = byte_field(q[i], 4, 0x0F0F0F0Fu);
        if constexpr (T == TensorType::Q5_K) {
            int qh[8];
            load_words_a16<8>(b.qh, qh);
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                w.q0[i] |= byte_field(qh[i], 2 * j, 0x01010101u) << 4;
                w.q1[i] |= byte_field(qh[i], 2 * j + 1, 0x01010101u) << 4;
            }
        }
        int sc0, mn0, sc1, mn1;
        scale_min_k4(2 * j, b.scales, sc0, mn0);
        scale_min_k4(2 * j + 1, b.scales, sc1, mn1);
        const float d = h2f(b.d), dmin = h2f(b.dmin);
        w.d0 = d * static_cast<float>(sc0), w.d1 = d * static_cast<float>(sc1);
        w.m0 = dmin * static_cast<float>(mn0), w.m1 = dmin * static_cast<float>(mn1);
        return w;
    }
    __device__ static float dot(const Unit& w, const int8_t* xq, const float* ds, int64_t u) {
        int x[8];
        float dx0, sx0, dx1, sx1;
        load_x_chunk(xq, ds, 2 * u, x, dx0, sx0);
        const int s0 = dot_words<8>(w.q0, x);
        load_x_chunk(xq, ds, 2 * u + 1, x, dx1, sx1);
        const int s1 = dot_words<8>(w.q1, x);
        return w.d0 * dx0 * static_cast<float>(s0) + w.d1 * dx1 * static_cast<float>(s1) - (w.m0 * sx0 + w.m1 * sx1);
    }
};
template <> struct Q8Dot<TensorType::Q4_K> : Q8DotK4<TensorType::Q4_K> {};
template <> struct Q8Dot<TensorType::Q5_K> : Q8DotK4<TensorType::Q5_K> {};

// Q6_K: a super-block is two halves of four 32-value groups; group g of half h takes the low
// (g < 2) or high nibble of ql[64h + 32(g & 1) + l] and bits 2g of qh[32h + l]; value =
// d·scale·(q − 32) with a scale per 16 values. Unit r of a super-block: half r / 2, groups
// r % 2 and r % 2 + 2, which share their ql bytes.
template <> struct Q8Dot<TensorType::Q6_K> {
    static constexpr int kUnitValues = 64;
    struct Unit { int qa[8], qb[8]; int sa0, sa1, sb0, sb1; float d; };
    // q − 32 per byte for q ∈ [0, 63], without carries between bytes: (q + 96) ^ 128.
    __device__ static int centered(int q) { return static_cast<int>((static_cast<uint32_t>(q) + 0x60606060u) ^ 0x80808080u); }
    __device__ static Unit load(const uint8_t* row, int64_t u) {
        const BlockQ6_K& b = reinterpret_cast<const BlockQ6_K*>(row)[u / 4];
        const int r = static_cast<int>(u % 4), half = r / 2, g = r % 2;
        int ql[8], qh[8];
        load_words_a2_inner<8>(b.ql + 64 * half + 32 * g, ql);  // ql, then qh and scales: inner
        load_words_a2_inner<8>(b.qh + 32 * half, qh);
        Unit w;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            w.qa[i] = centered(byte_field(ql[i], 0, 0x0F0F0F0Fu) | (byte_field(qh[i], 2 * g, 0x03030303u) << 4));
            w.qb[i] = centered(byte_field(ql[i], 4, 0x0F0F0F0Fu) | (byte_field(qh[i], 2 * g + 4, 0x03030303u) << 4));
        }
        const int ca = 4 * half + g, cb = ca + 2;  // groups' chunks within the super-block
        w.sa0 = b.scales[2 * ca], w.sa1 = b.scales[2 * ca + 1];
        w.sb0 = b.scales[2 * cb], w.sb1 = b.scales[2 * cb + 1];
        w.d = h2f(b.d);
        return w;
    }
    __device__ static float dot(const Unit& w, const int8_t* xq, const float* ds, int64_t u) {
        const int64_t r = u % 4, first = 8 * (u / 4) + 4 * (r / 2) + r % 2;  // row chunk of group a
        int x[8];
        float dxa, sxa, dxb, sxb;
        load_x_chunk(xq, ds, first, x, dxa, sxa);
        const int a = w.sa0 * dot_words<4>(w.qa, x) + w.sa1 * dot_words<4>(w.qa + 4, x + 4);
        load_x_chunk(xq, ds, first + 2, x, dxb, sxb);
        const int bsum = w.sb0 * dot_words<4>(w.qb, x) + w.sb1 * dot_words<4>(w.qb + 4, x + 4);
        return w.d * (dxa * static_cast<float>(a) + dxb * static_cast<float>(bsum));
    }
};

// The formats with an int8 kernel; dispatch_weight_type covers the rest (f32 activations).
template <typename F> bool dispatch_q8_weight_type(TensorType t, F&& f) {
    using T = TensorType;
    switch (t) {
        case T::Q4_0: f(TypeTag<T::Q4_0>{}); return true;
        case T::Q4_1: f(TypeTag<T::Q4_1>{}); return true;
        case T::Q5_0: f(TypeTag<T::Q5_0>{}); return true;
        case T::Q5_1: f(TypeTag<T::Q5_1>{}); return true;
        case T::Q8_0: f(TypeTag<T::Q8_0>{}); return true;
        case T::Q4_K: f(TypeTag<T::Q4_K>{}); return true;
        case T::Q5_K: f(TypeTag<T::Q5_K>{}); return true;
        case T::Q6_K: f(TypeTag<T::Q6_K>{}); return true;
        case T::IQ4_NL: f(TypeTag<T::IQ4_NL>{}); return true;
        case T::MXFP4: f(TypeTag<T::MXFP4>{}); return true;
        case T::NVFP4: f(TypeTag<T::NVFP4>{}); return true;
        case T::Q1_0: f(TypeTag<T::Q1_0>{}); return true;
        case T::Q2_0: f(TypeTag<T::Q2_0>{}); return true;
        default: return false;
    }
}

}  // namespace strata::gpu
