#pragma once
// Shared pieces of the super-block quantizers (quant/k_quants.h, quant/q8_k.h): rounding, the
// scale searches that pick a block's scale (and minimum) by least squares, and the 6-bit
// scale/min packing of Q4_K and Q5_K. Ports of ggml's helpers of the same purpose; the float
// operations keep ggml's order so that every search reaches the same choice.
//
//   int8_t L[16];
//   float scale = make_qx_quants(16, 32, x, L, nullptr);   // x ≈ scale·(L − 32)

#include <bit>
#include <cstdint>

namespace strata {

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5·2^23 leaves the integer in the low
// mantissa bits. Quantizers must use this rather than lroundf (ties away from zero) to match ggml.
inline int nearest_int(float v) {
    const float shifted = v + 12582912.f;
    return static_cast<int>(std::bit_cast<uint32_t>(shifted) & 0x007fffff) - 0x00400000;
}

// Symmetric quants L ∈ [0, 2·nmax) with x ≈ scale·(L − nmax), chosen to minimize Σw·(x − scale·l)²
// over 19 candidate scales around −nmax/max. `weights` null means w = x² (ggml's rmse_type 1).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* weights);

// Q3_K's variant: starts from −nmax/max and moves single quants while the weighted error drops.
// Returns the scale; L ∈ [0, 2·nmax).
float make_q3_quants(int n, int nmax, const float* x, int8_t* L);

// Asymmetric quants L ∈ [0, nmax] with x ≈ scale·L − min_out, min_out ≥ 0, searching nstep+1
// scales (nmax + rmin + rdelta·k)/(max − min) by weighted least squares on scale and min.
// `use_mad` scores by weighted absolute error instead of squared. `scratch` holds n bytes.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* min_out,
                       uint8_t* scratch, float rmin, float rdelta, int nstep, bool use_mad);

// Q4_K/Q5_K keep 8 6-bit scales and 8 6-bit mins in 12 bytes: bytes 0-3 hold scales 0-3 and
// bytes 4-7 mins 0-3 in their low 6 bits; bytes 8-11 hold the low nibbles of scale/min 4-7, and
// the top 2 bits of bytes 0-7 hold their high 2 bits.
inline void get_scale_min_k4(int j, const uint8_t* packed, uint8_t* scale, uint8_t* min) {
    if (j < 4) {
        *scale = packed[j] & 63;
        *min = packed[j + 4] & 63;
    } else {
        *scale = static_cast<uint8_t>((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4));
        *min = static_cast<uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
    }
}
// `packed` must be zeroed first.
inline void set_scale_min_k4(int j, uint8_t scale, uint8_t min, uint8_t* packed) {
    if (j < 4) {
        packed[j] = scale;
        packed[j + 4] = min;
    } else {
        packed[j + 4] = static_cast<uint8_t>((scale & 0xF) | ((min & 0xF) << 4));
        packed[j - 4] |= static_cast<uint8_t>((scale >> 4) << 6);
        packed[j] |= static_cast<uint8_t>((min >> 4) << 6);
    }
}

}  // namespace strata
