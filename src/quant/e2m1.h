#pragma once
// The FP4 E2M1 codes shared by MXFP4 (quant/mxfp4.h) and NVFP4 (quant/nvfp4.h): bit 3 the sign,
// bits 0-2 the magnitude {0, 0.5, 1, 1.5, 2, 3, 4, 6}. The table holds the values doubled, so they
// are integers; each format halves its block scale to compensate.
//
//   float v = static_cast<float>(kE2M1Doubled[code]) * half_scale;
//   uint8_t c = nearest_e2m1_code(x, half_scale);

#include <cmath>
#include <cstdint>

namespace strata {

inline constexpr int8_t kE2M1Doubled[16] = {
#include "quant/mxfp4_values.inc"
};

// ggml's best_index_mxfp4: the first code with the smallest |value·scale − x| (ties keep the lower
// code, so +0 wins over −0).
inline uint8_t nearest_e2m1_code(float x, float half_scale) {
    uint8_t best = 0;
    float best_err = std::fabs(static_cast<float>(kE2M1Doubled[0]) * half_scale - x);
    for (uint8_t c = 1; c < 16; ++c) {
        const float err = std::fabs(static_cast<float>(kE2M1Doubled[c]) * half_scale - x);
        if (err < best_err) {
            best = c;
            best_err = err;
        }
    }
    return best;
}

}  // namespace strata
