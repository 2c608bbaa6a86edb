#pragma once
// The ternary formats TQ1_0 and TQ2_0 (BitNet b1.58, TriLM): every value is d·t with t ∈ {−1, 0, 1}
// and one fp16 d per 256 values. TQ2_0 spends 2 bits per trit; TQ1_0 packs 5 trits per byte
// (3^5 = 243 ≤ 256) for 1.6875 bits per value. The dot type is Q8_K (quant/q8_k.h).
//
//   std::vector<BlockTQ1_0> w(n / 256);
//   quantize_row_tq1_0(x, w.data(), n);
//   float y = dot_tq1_0_q8_k(w.data(), q8_k_activation, n);

#include <cstdint>

namespace strata {

// A byte holding trits t0..t4 (each 0, 1, 2 for −1, 0, 1) stores ceil(256·T/243) with
// T = t0·81 + t1·27 + t2·9 + t3·3 + t4: a fixed-point fraction T/243, so that trit k is read back
// as the top bits of (byte·3^k mod 256)·3. qs[0..31] hold values 0-159 (trit k of byte m is
// value 32k + m), qs[32..47] values 160-239 (trit k of byte m is 160 + 16k + m), and qh[0..3]
// values 240-255 (4 trits each, trit k of byte j is 240 + 4k + j; the fifth trit is unused).
struct BlockTQ1_0 {
    static constexpr int kValues = 256;
    uint8_t qs[48];
    uint8_t qh[4];
    uint16_t d;  // fp16
};
// Trit of value 128·h + 32·k + m is (qs[32·h + m] >> 2k) & 3, minus 1.
struct BlockTQ2_0 {
    static constexpr int kValues = 256;
    uint8_t qs[64];
    uint16_t d;  // fp16
};
static_assert(sizeof(BlockTQ1_0) == 54);  // gguf/tensor_type.cpp
static_assert(sizeof(BlockTQ2_0) == 66);

// `n` must be a multiple of 256.
void dequantize_row_tq1_0(const void* src, float* dst, int64_t n);
void dequantize_row_tq2_0(const void* src, float* dst, int64_t n);
// ggml's reference quantizers: d = max |x|, t = round(x/d).
void quantize_row_tq1_0(const float* src, void* dst, int64_t n);
void quantize_row_tq2_0(const float* src, void* dst, int64_t n);
float dot_tq1_0_q8_k(const void* weights, const void* activation, int64_t n);
float dot_tq2_0_q8_k(const void* weights, const void* activation, int64_t n);

}  // namespace strata
