#pragma once
// The lookup tables that define ggml's IQ ("importance") formats, shared by quant/iq1..iq4. The
// IQ1/IQ2/IQ3 formats store, for each group of 8 (or 4) values, an index into a fixed grid of
// magnitude patterns instead of the magnitudes themselves; the values are copied from ggml
// (quant/*.inc, shared with the GPU kernels) because a file decodes correctly only with exactly
// these grids.
//
//   uint64_t entry = kIq2xxsGrid[index];          // 8 magnitudes, one per byte
//   float v = d * grid_byte(entry, j);             // value j of the group, before its sign
//   bool negative = sign_bit(kIq2SignTable[s7], j);

#include <cstdint>

namespace strata {

// Grid entries pack one magnitude per byte, value j of the group in byte j (little-endian order:
// ggml reads the entries through a uint8_t pointer on little-endian hosts).
//   IQ2: bytes ∈ {0x08, 0x19, 0x2b}          IQ3_XXS: {4, 12, 20, 28, 36, 44, 52, 62}
//   IQ3_S: odd values 1..15                  IQ1: int8 ∈ {−1, 0, +1}
extern const uint64_t kIq1sGrid[2048];    // IQ1_S, IQ1_M: 11-bit index, 8 values
extern const uint64_t kIq2xxsGrid[256];   // IQ2_XXS: 8-bit index, 8 values
extern const uint64_t kIq2xsGrid[512];    // IQ2_XS: 9-bit index, 8 values
extern const uint64_t kIq2sGrid[1024];    // IQ2_S: 10-bit index, 8 values
extern const uint32_t kIq3xxsGrid[256];   // IQ3_XXS: 8-bit index, 4 values
extern const uint32_t kIq3sGrid[512];     // IQ3_S: 9-bit index, 4 values

// IQ2_XXS, IQ2_XS and IQ3_XXS store 7 sign bits per group of 8; the eighth is implied by an even
// count of negatives. kIq2SignTable[s7] expands the 7 bits to the 8-bit mask (bit j = value j
// negative): s7 plus the parity of s7 in bit 7.
extern const uint8_t kIq2SignTable[128];

// IQ4_NL and IQ4_XS: the 16 non-uniform levels a 4-bit code selects, value = d·kIq4nlValues[code].
extern const int8_t kIq4nlValues[16];

inline uint8_t grid_byte(uint64_t entry, int j) { return static_cast<uint8_t>(entry >> (8 * j)); }
inline bool sign_bit(uint8_t signs, int j) { return (signs >> j) & 1; }

}  // namespace strata
