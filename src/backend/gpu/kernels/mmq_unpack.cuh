#pragma once
// How the MMQ kernel (ops_matmul_mmq.cu) unpacks one unit of a weight row (Q8Dot<T>'s unit: 32
// or 64 values, kernels/q8_dot.cuh) into what the tensor cores read: for each 32-value chunk of
// the unit, its 32 signed bytes and (d, m) such that the chunk's product with an int8 activation
// block (d_x, d_x·Σq_x) is
//   d · d_x · Σ q·q_x + m · d_x·Σq_x
// (m carries Q4_0's −8d, Q4_1's and the K-quants' offsets; 0 where a format has none). Q6_K keeps
// a scale per 16 values: its bytes are q − 32 and each chunk also has two int8 scales, applied to
// the integer sums of its halves.
//
//   MmqUnpack<T>::kChunks           32-value chunks per unit
//   MmqUnpack<T>::chunk(u, j)       index in the row of chunk j of unit u
//   MmqUnpack<T>::store(w, j, dst)  chunk j's 8 words to dst (16-byte aligned)
//   MmqUnpack<T>::scale(w, j)       chunk j's (d, m)
//   MmqUnpack<T>::sub(w, j)         Q6_K: chunk j's two scales as bytes 0 and 1
#include <cstdint>

#include "backend/gpu/kernels/q8_dot.cuh"

namespace strata::gpu {

__device__ __forceinline__ void store_words8(int* dst, const int* a, const int* b) {
    reinterpret_cast<int4*>(dst)[0] = make_int4(a[0], a[1], a[2], a[3]);
    reinterpret_cast<int4*>(dst)[1] = make_int4(b[0], b[1], b[2], b[3]);
}

template <TensorType T> struct MmqUnpack;

template <> struct MmqUnpack<TensorType::Q8_0> {
    using Unit = Q8Dot<TensorType::Q8_0>::Unit;
    static constexpr int kChunks = 1;
    static constexpr bool kOffset = false, kSub16 = false;
    __device__ static int64_t chunk(int64_t u, int) { return u; }
    __device__ static void store(const Unit& w, int, int* dst) { store_words8(dst, w.q, w.q + 4); }
    __device__ static float2 scale(const Unit& w, int) { return make_float2(w.d, 0.0f); }
    __device__ static int sub(const Unit&, int) { return 0; }
};

// The 32-value formats unpacked to (lo, hi, d, m): Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4.
template <TensorType T, bool kHasOffset> struct MmqUnpackLegacy {
    using Unit = Q8DotLegacyUnit::Unit;
    static constexpr int kChunks = 1;
    static constexpr bool kOffset = kHasOffset, kSub16 = false;
    __device__ static int64_t chunk(int64_t u, int) { return u; }
    __device__ static void store(const Unit& w, int, int* dst) { store_words8(dst, w.lo, w.hi); }
    __device__ static float2 scale(const Unit& w, int) { return make_float2(w.d, w.m); }
    __device__ static int sub(const Unit&, int) { return 0; }
};
template <> struct MmqUnpack<TensorType::Q4_0> : MmqUnpackLegacy<TensorType::Q4_0, true> {};
template <> struct MmqUnpack<TensorType::Q4_1> : MmqUnpackLegacy<TensorType::Q4_1, true> {};
template <> struct MmqUnpack<TensorType::Q5_0> : MmqUnpackLegacy<TensorType::Q5_0, true> {};
template <> struct MmqUnpack<TensorType::Q5_1> : MmqUnpackLegacy<TensorType::Q5_1, true> {};
template <> struct MmqUnpack<TensorType::IQ4_NL> : MmqUnpackLegacy<TensorType::IQ4_NL, false> {};
template <> struct MmqUnpack<TensorType::MXFP4> : MmqUnpackLegacy<TensorType::MXFP4, false> {};

// Q4_K and Q5_K: unit u is chunks 2u (q0) and 2u + 1 (q1); the dot subtracts m·Σx.
template <TensorType T> struct MmqUnpackK4 {
    using Unit = typename Q8Dot<T>::Unit;
    static constexpr int kChunks = 2;
    static constexpr bool kOffset = true, kSub16 = false;
    __device__ static int64_t chunk(int64_t u, int j) { return 2 * u + j; }
    __device__ static void store(const Unit& w, int j, int* dst) {
        if (j == 0) store_words8(dst, w.q0, w.q0 + 4);
        else store_words8(dst, w.q1, w.q1 + 4);
    }
    __device__ static float2 scale(const Unit& w, int j) { return j == 0 ? make_float2(w.d0, -w.m0) : make_float2(w.d1, -w.m1); }
    __device__ static int sub(const Unit&, int) { return 0; }
};
template <> struct MmqUnpack<TensorType::Q4_K> : MmqUnpackK4<TensorType::Q4_K> {};
template <> struct MmqUnpack<TensorType::Q5_K> : MmqUnpackK4<TensorType::Q5_K> {};

// Q6_K: unit u of super-block s = u / 4 is groups a (chunk 8s + 4(r / 2) + r % 2, r = u % 4)
// and b (two chunks on), each with a scale per 16 values (Q8Dot<Q6_K>).
template <> struct MmqUnpack<TensorType::Q6_K> {
    using Unit = Q8Dot<TensorType::Q6_K>::Unit;
    static constexpr int kChunks = 2;
    static constexpr bool kOffset = false, kSub16 = true;
    __device__ static int64_t chunk(int64_t u, int j) {
        const int64_t r = u % 4;
        return 8 * (u / 4) + 4 * (r / 2) + r % 2 + 2 * j;
    }
    __device__ static void store(const Unit& w, int j, int* dst) {
        if (j == 0) store_words8(dst, w.qa, w.qa + 4);
        else store_words8(dst, w.qb, w.qb + 4);
    }
    __device__ static float2 scale(const Unit& w, int) { return make_float2(w.d, 0.0f); }
    __device__ static int sub(const Unit& w, int j) {
        return j == 0 ? (w.sa0 & 0xFF) | ((w.sa1 & 0xFF) << 8) : (w.sb0 & 0xFF) | ((w.sb1 & 0xFF) << 8);
    }
};

// Q1_0: one chunk per unit, bytes b ∈ {0, 1} with (2d, −d): 2d·Σb·x − d·Σx.
template <> struct MmqUnpack<TensorType::Q1_0> {
    using Unit = Q8Dot<TensorType::Q1_0>::Unit;
    static constexpr int kChunks = 1;
    static constexpr bool kOffset = true, kSub16 = false;
    __device__ static int64_t chunk(int64_t u, int) { return u; }
    __device__ static void store(const Unit& w, int, int* dst) { store_words8(dst, w.q, w.q + 4); }
    __device__ static float2 scale(const Unit& w, int) { return make_float2(2.0f * w.d, -w.d); }
    __device__ static int sub(const Unit&, int) { return 0; }
};

// Q2_0: chunks 2u and 2u + 1 of codes c with (d, −d): d·Σc·x − d·Σx.
template <> struct MmqUnpack<TensorType::Q2_0> {
    using Unit = Q8Dot<TensorType::Q2_0>::Unit;
    static constexpr int kChunks = 2;
    static constexpr bool kOffset = true, kSub16 = false;
    __device__ static int64_t chunk(int64_t u, int j) { return 2 * u + j; }
    __device__ static void store(const Unit& w, int j, int* dst) {
        if (j == 0) store_words8(dst, w.q0, w.q0 + 4);
        else store_words8(dst, w.q1, w.q1 + 4);
    }
    __device__ static float2 scale(const Unit& w, int) { return make_float2(w.d, -w.d); }
    __device__ static int sub(const Unit&, int) { return 0; }
};

// Formats without an unpacking here (NVFP4: a float scale per 16 values, which the tiles' one
// (d, m) per chunk cannot carry) take the float prompt kernels.
template <TensorType T> inline constexpr bool kMmqUnpacks = true;
template <> inline constexpr bool kMmqUnpacks<TensorType::NVFP4> = false;

}  // namespace strata::gpu
