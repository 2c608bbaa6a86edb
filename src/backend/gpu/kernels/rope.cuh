#pragma once
// The angle of rope pair i at position pos, shared by the rope kernels: theta in double as the
// CPU references compute it (cpu_rope: base^(-2i/d); cpu_rope_table: a precomputed frequency),
// cos and sin rounded to float, then scaled by the table's factor (1 for plain rope: exact).

#include <cmath>
#include <cstdint>

#include "backend/gpu/gpu_ops.h"

namespace strata::gpu {

__device__ __forceinline__ void rope_cos_sin(const GpuRope& r, int32_t pos, int64_t i, float& c, float& s) {
    const double freq = r.inv_freq ? r.inv_freq[i]
                                   : pow(static_cast<double>(r.base),
                                         -2.0 * static_cast<double>(i) / static_cast<double>(r.rope_dims));
    const double theta = static_cast<double>(pos) * freq;
    c = static_cast<float>(cos(theta)) * r.attn_factor;
    s = static_cast<float>(sin(theta)) * r.attn_factor;
}

}  // namespace strata::gpu
