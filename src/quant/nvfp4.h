#pragma once
// NVFP4 (ggml type 40): NVIDIA's 4-bit float format as ggml stores it. A block holds 64 values in
// four sub-blocks of 16; each sub-block has an unsigned E4M3 scale byte and 16 E2M1 codes (the
// same codes as MXFP4, quant/mxfp4.h). There is no per-tensor scale in ggml's layout. The dot type
// is Q8_0 (quant/legacy.h): one NVFP4 block meets two Q8_0 blocks.
//
//   std::vector<BlockNvfp4> w(n / 64);
//   quantize_row_nvfp4(x, w.data(), n);
//   float y = dot_nvfp4_q8_0(w.data(), q8_0_activation, n);

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace strata {

// Sub-block s uses d[s] and qs[8s .. 8s+7]: the low nibble of qs[8s + j] is value 16s + j, the
// high nibble value 16s + 8 + j. Value = kE2M1Doubled[code] · ue4m3_half(d[s]).
struct BlockNvfp4 {
    static constexpr int kValues = 64;
    static constexpr int kSubValues = 16;
    uint8_t d[4];    // unsigned E4M3 scales: 4 exponent bits (bias 7), 3 mantissa bits
    uint8_t qs[32];  // E2M1 codes: bit 3 sign, bits 0-2 magnitude
};
static_assert(sizeof(BlockNvfp4) == 36);  // gguf/tensor_type.cpp

// Half the value of an unsigned E4M3 byte (the codes' table is doubled, so the scale is halved,
// as ggml's ggml_ue4m3_to_fp32 does). Exponent 0 is subnormal (m·2^−9); 0x00 and 0x7F (E4M3's NaN)
// give 0; bit 7 is ignored (as in ggml, whose decoder reads only bits 0-6, so 0xFF is 240).
// Exact: built from bits.
constexpr float ue4m3_half(uint8_t x) {
    if (x == 0 || x == 0x7F) return 0.0f;
    const uint32_t exp = (x >> 3) & 0xF;
    const uint32_t man = x & 0x7;
    if (exp == 0) return static_cast<float>(man) * 0x1p-10f;
    return std::bit_cast<float>(((exp + 119u) << 23) | (man << 20));
}
// Every byte's ue4m3_half, for kernels that look scales up.
inline constexpr auto kUe4m3Half = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = ue4m3_half(static_cast<uint8_t>(i));
    return t;
}();
// ggml's encoder (ggml_fp32_to_ue4m3): 0 for x ≤ 0 or NaN, x above 448 saturates, subnormals round
// half up, normals round the top three mantissa bits half up; any result whose exponent would be
// 15 becomes 0x7E (448), so 0x78-0x7D never come out.
uint8_t fp32_to_ue4m3(float x);

// `n` must be a multiple of 64.
void dequantize_row_nvfp4(const void* src, float* dst, int64_t n);
// ggml's reference quantizer: per sub-block the scale byte encodes max|x| / 6, then each value
// takes the nearest code (the first on ties).
void quantize_row_nvfp4(const float* src, void* dst, int64_t n);
float dot_nvfp4_q8_0(const void* weights, const void* activation, int64_t n);

}  // namespace strata
